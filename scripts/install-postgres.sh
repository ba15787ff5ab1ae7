#!/bin/sh
# install-postgres.sh installs the PostgreSQL server binaries the store's
# tests start (internal/pgtest: initdb and postgres in a temporary folder,
# on a random loopback port, as the test's own child): Debian's postgresql
# package. It is idempotent: when initdb is present it does nothing. It
# does not create or start Debian's own cluster. CI calls it from .ci/run;
# run it once locally before
#   go test ./store/ ./cmd/toolenv/ -run 'Postgres|Replica'
set -eu

have_initdb() {
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && { echo "$d"; return 0; }
	done
	command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
	return 1
}

if bin=$(have_initdb); then
	echo "install-postgres: PostgreSQL already installed in $bin"
	"$bin/postgres" --version 2>/dev/null || true
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-postgres: need root (or sudo) to apt-get install postgresql" >&2
		exit 1
	fi
fi

# The tests make their own clusters: keep the package from creating one.
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
	$SUDO mkdir -p /etc/postgresql-common
	echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null

if ! bin=$(have_initdb); then
	echo "install-postgres: apt-get finished but no initdb was found under /usr/lib/postgresql/*/bin" >&2
	exit 1
fi
"$bin/postgres" --version 2>/dev/null || true
