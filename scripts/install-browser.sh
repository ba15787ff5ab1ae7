#!/bin/sh
# install-browser.sh installs the headless browser the review page's
# browser test drives (mapping/review): Debian's chromium and its
# chromedriver. It is idempotent: when both are present it does nothing.
# CI calls it from .ci/run; run it once locally before
#   go test ./mapping/review/ -run Browser
set -eu

have() { command -v "$1" >/dev/null 2>&1; }

if have chromium && have chromedriver; then
	echo "install-browser: chromium and chromedriver already installed"
	chromium --version 2>/dev/null || true
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if have sudo; then
		SUDO="sudo"
	else
		echo "install-browser: need root (or sudo) to apt-get install chromium chromium-driver" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null

if ! have chromium || ! have chromedriver; then
	echo "install-browser: apt-get finished but chromium or chromedriver is still missing from PATH" >&2
	exit 1
fi
chromium --version 2>/dev/null || true
chromedriver --version 2>/dev/null || true
