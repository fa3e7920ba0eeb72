#!/usr/bin/env bash
# Runs every Go fuzz target in the module for the given time each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-20s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    echo "== $pkg $f"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg"
  done
done
