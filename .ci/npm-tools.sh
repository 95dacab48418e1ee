#!/usr/bin/env bash
# The pinned snarkjs and circom2 (circom's wasm build) for the snarkjs tests and bench, in a
# cached folder (.cache/npm-tools, git-ignored); installs only when missing. Prints the folder
# of their executables (node_modules/.bin), which the tests read from PROOFQ_NPM_TOOLS.
set -euo pipefail
SNARKJS_VERSION=0.7.6
CIRCOM2_VERSION=0.2.23
cd "$(dirname "$0")/.."
prefix=.cache/npm-tools
stamp="$prefix/installed-snarkjs-$SNARKJS_VERSION-circom2-$CIRCOM2_VERSION"
if [ ! -e "$stamp" ]; then
    rm -rf "$prefix" && mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
        "snarkjs@$SNARKJS_VERSION" "circom2@$CIRCOM2_VERSION" >&2
    touch "$stamp"
fi
echo "$PWD/$prefix/node_modules/.bin"
