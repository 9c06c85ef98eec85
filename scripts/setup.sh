#!/bin/sh
# Installs everything the project needs from a clone that has only node and npm.
set -e
cd "$(dirname "$0")/.."
if [ -x node_modules/.bin/bun ]; then
  ./node_modules/.bin/bun install --frozen-lockfile >/dev/null
else
  npx -y bun@1.4.4 install --frozen-lockfile
fi
