#!/bin/sh
# install-python.sh installs what OpenEnv's own Python client code needs to
# run against toolenv's /openenv in the tests (episode/openenv:
# TestOpenEnvClients): Debian's python3-websockets (10.4; OpenEnv asks
# for 15, which Debian does not ship, so the test aliases OpenEnv's
# websockets.asyncio.client import to 10.4's client, changing no OpenEnv
# logic) and python3-requests. OpenEnv's pydantic models need pydantic 2,
# which the machine image's python3 has (Debian's python3-pydantic is
# 1.10). It is idempotent: when the packages are there it does nothing.
# CI calls it from .ci/run; run it once locally before
#   go test ./episode/openenv -run TestOpenEnvClients
set -eu

have() { [ -d /usr/lib/python3/dist-packages/websockets ] && [ -d /usr/lib/python3/dist-packages/requests ]; }

# pydantic 2 comes with the machine image's python3 (no Debian package
# has it, and only Debian's and npm's registries are reachable): say so
# now rather than let the test fail later.
pydantic2() {
	if ! python3 -c "import pydantic, sys; sys.exit(0 if pydantic.VERSION >= '2' else 1)" 2>/dev/null; then
		echo "install-python: the python3 on PATH ($(command -v python3 || echo none)) lacks pydantic 2, which OpenEnv's client models need; use the machine image's python3 (3.11 with pydantic 2)" >&2
		exit 1
	fi
}

if have; then
	pydantic2
	echo "install-python: python3-websockets and python3-requests already installed"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-python: need root (or sudo) to apt-get install python3-websockets python3-requests" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends python3-websockets python3-requests >/dev/null

if ! have; then
	echo "install-python: apt-get finished but /usr/lib/python3/dist-packages lacks websockets or requests" >&2
	exit 1
fi
pydantic2
echo "install-python: python3-websockets $(dpkg-query -W -f='${Version}' python3-websockets) installed"
