#!/usr/bin/env bash
# `make generate`: regenerates everything derived from apis/ with
# `go tool apiloom-gen` (codegen/pipeline), the same entry point every
# module `loom init` writes uses, then apiloom's own test fixture below.
set -euo pipefail
cd "$(dirname "$0")/.."

# The protobuf step needs protoc, which no Go module provides.
source hack/lib/protoc.sh
protoc_ensure

go tool apiloom-gen "$@"

# The CRD conformance test's CRDs: controller-gen (pinned) turns the
# test-only group into the CRD a real kube-apiserver serves, the reference
# apiloom's schema validation is compared with (test/crdconf).
crds=test/crdconf/testdata/crd
rm -rf "$crds"
go tool controller-gen crd paths=./apis/crdconf/... output:crd:dir="$crds"

# The example kinds as CRDs, for the load suite's kube-apiserver peer
# (hack/load.sh): it serves the same kinds, schemas, defaults, CEL rules,
# selectable fields and columns as apiloom, so both store and send the same
# objects.
crds=hack/peer-crds
rm -rf "$crds"
go tool controller-gen crd paths=./apis/example/... output:crd:dir="$crds"
