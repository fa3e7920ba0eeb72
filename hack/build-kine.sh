#!/usr/bin/env bash
# Builds kine (the version test/kine's go.mod pins, as a Go tool of that
# module, so that its dependencies stay out of apiloom's) into bin/kine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(pwd)/bin/kine
(cd test/kine && ${GO:-go} build -o "$out" github.com/k3s-io/kine)
echo "$out"
