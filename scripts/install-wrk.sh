#!/bin/sh
# install-wrk.sh installs wrk, the HTTP load generator "toolenv bench" drives
# both of its servers with (an external client written in C, so that the
# client saturates after the servers do): Debian's wrk package. It is
# idempotent: when wrk is on the PATH it does nothing. CI calls it from
# .ci/run; run it once locally before
#   toolenv bench
#   go test ./cmd/toolenv -run TestBenchMeasuresToolenvAndBaseline
set -eu

if command -v wrk >/dev/null 2>&1; then
	echo "install-wrk: $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2) already installed"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-wrk: need root (or sudo) to apt-get install wrk" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends wrk >/dev/null

if ! command -v wrk >/dev/null 2>&1; then
	echo "install-wrk: apt-get finished but wrk is not on the PATH" >&2
	exit 1
fi
echo "install-wrk: $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2) installed"
