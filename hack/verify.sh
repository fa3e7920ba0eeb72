#!/usr/bin/env bash
# Fails when `make generate` would change a file, when code is not gofmt
# clean, or when go vet complains. Runs in a scratch copy of the tree so a
# failed verify never leaves the work tree half-regenerated.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

unformatted=$(gofmt -s -l $(git ls-files '*.go') 2>/dev/null || true)
if [[ -n $unformatted ]]; then
  echo "not gofmt -s clean:" >&2; echo "$unformatted" >&2; exit 1
fi

go vet ./...
# The failpoints build (test/robustness/planted_test.go) must stay vet clean too.
go vet -tags apiloom_failpoints ./server/...
(cd test/kine && go vet ./...)
(cd test/robustness && go vet ./...)
(cd test/helm && go vet ./...)
# Only the conformance module's own command: its suite is upstream's e2e
# packages, which make conformance compiles.
(cd test/conformance && go vet ./summarize)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The tree as it is (tracked and untracked, not ignored), without .git.
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$scratch"
(cd "$scratch" && hack/update-codegen.sh >/dev/null)
if ! diff -r -q --exclude=.git "$root/generated" "$scratch/generated" >/dev/null ||
   ! diff -r -q "$root/apis" "$scratch/apis" >/dev/null ||
   ! diff -r -q "$root/test/crdconf/testdata/crd" "$scratch/test/crdconf/testdata/crd" >/dev/null ||
   ! diff -r -q "$root/hack/peer-crds" "$scratch/hack/peer-crds" >/dev/null; then
  echo "generated code is stale; run 'make generate' and commit:" >&2
  diff -r "$root/generated" "$scratch/generated" | head -50 >&2 || true
  diff -r "$root/apis" "$scratch/apis" | head -50 >&2 || true
  diff -r "$root/test/crdconf/testdata/crd" "$scratch/test/crdconf/testdata/crd" | head -50 >&2 || true
  diff -r "$root/hack/peer-crds" "$scratch/hack/peer-crds" | head -50 >&2 || true
  exit 1
fi
echo "verify: ok"
