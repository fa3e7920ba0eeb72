#!/usr/bin/env bash
# Regenerates everything derived from apis/: deepcopy, register, openapi, apply
# configurations, clientset, listers, informers and the server wiring
# (codegen/apiserver-gen). Groups and versions are found by walking apis/ for
# doc.go files carrying +groupName; nothing here names a group.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
module=$(go list -m)
out=generated

# apis/<group>/<version> directories, as Go import paths.
mapfile -t dirs < <(find apis -mindepth 3 -maxdepth 3 -name doc.go -exec grep -l '^// +groupName=' {} + | xargs -r -n1 dirname | sort)
if [[ ${#dirs[@]} -eq 0 ]]; then
  echo "no API packages under apis/ (apis/<group>/<version>/doc.go with +groupName)" >&2
  exit 1
fi
pkgs=()
for d in "${dirs[@]}"; do pkgs+=("$module/$d"); done
# The upstream packages of the built-in kinds (builtin/apis.yaml): their
# OpenAPI definitions are openapi-gen's, and apiserver-gen wires the kinds
# the file names.
mapfile -t builtin_pkgs < <(sed -n 's/^- package: *//p' builtin/apis.yaml)
builtin_readonly=()
for p in "${builtin_pkgs[@]}"; do builtin_readonly+=(--readonly-pkg "$p"); done

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install \
  k8s.io/code-generator/cmd/{deepcopy-gen,register-gen,conversion-gen,client-gen,lister-gen,informer-gen,applyconfiguration-gen} \
  k8s.io/kube-openapi/cmd/openapi-gen
go build -o "$bin/apiserver-gen" ./codegen/cmd/apiserver-gen

header=hack/boilerplate.go.txt

# Stale outputs go first, so a removed type or group leaves nothing behind.
rm -rf "$out"
find apis -name 'zz_generated.*.go' -delete

echo "generating for: ${dirs[*]}"
"$bin/deepcopy-gen" --go-header-file "$header" --output-file zz_generated.deepcopy.go "${pkgs[@]}"
"$bin/register-gen" --go-header-file "$header" --output-file zz_generated.register.go "${pkgs[@]}"

# Conversions between each version of a kind and the version it is stored
# in (+kubebuilder:storageversion), for packages whose doc.go names the
# storage version's package in +k8s:conversion-gen=<import path>.
# conversion-gen writes what fields that match allow and only warns about
# the rest; a conversion it could not write must be written by hand beside
# the types, so a missing one fails here, named as it must be.
"$bin/conversion-gen" --go-header-file "$header" --output-file zz_generated.conversion.go "${pkgs[@]}" 2>"$bin/conversion-gen.log" || {
  cat "$bin/conversion-gen.log" >&2
  exit 1
}
if grep -q 'could not find nor generate a final Conversion function' "$bin/conversion-gen.log"; then
  echo "conversion-gen: these conversions need writing by hand, in the package that has +k8s:conversion-gen (k8s.io/apimachinery/pkg/conversion):" >&2
  awk '
    /could not find nor generate a final Conversion function for/ {
      n = split($0, w, " "); in_t = w[n-2]; out_t = w[n]
      na = split(in_t, a, "/"); split(a[na], ia, "."); nb = split(out_t, b, "/"); split(b[nb], ob, ".")
      printf "  func Convert_%s_%s_To_%s_%s(in *%s.%s, out *%s.%s, s conversion.Scope) error\n", ia[1], ia[2], ob[1], ob[2], ia[1], ia[2], ob[1], ob[2]
      next
    }
    /^[^ ]*  *[^ ]*  *[0-9]* conversion.go:[0-9]*\]       - / { sub(/.*- /, ""); printf "      field %s does not match the peer type\n", $0 }
  ' "$bin/conversion-gen.log" >&2
  exit 1
fi

"$bin/openapi-gen" --go-header-file "$header" \
  --output-file zz_generated.openapi.go --output-dir "$out/openapi" --output-pkg "$module/$out/openapi" \
  --report-filename /dev/null \
  --readonly-pkg k8s.io/apimachinery/pkg/apis/meta/v1 --readonly-pkg k8s.io/apimachinery/pkg/runtime \
  --readonly-pkg k8s.io/apimachinery/pkg/version --readonly-pkg k8s.io/apimachinery/pkg/types \
  --readonly-pkg k8s.io/apimachinery/pkg/api/resource --readonly-pkg k8s.io/apimachinery/pkg/util/intstr \
  --readonly-pkg k8s.io/api/autoscaling/v1 "${builtin_readonly[@]}" \
  k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version \
  k8s.io/apimachinery/pkg/util/intstr k8s.io/api/autoscaling/v1 \
  "${builtin_pkgs[@]}" "${pkgs[@]}"

# The server wiring comes before the apply configurations: their type
# converter needs the OpenAPI schema of every kind, which the server states.
"$bin/apiserver-gen" --go-header-file "$header" \
  --builtins builtin/apis.yaml \
  --output-dir "$out/apiserver" --output-pkg "$module/$out/apiserver" "${pkgs[@]}"
go run ./hack/openapi-schema >"$bin/openapi-schema.json"

"$bin/applyconfiguration-gen" --go-header-file "$header" --openapi-schema "$bin/openapi-schema.json" \
  --output-dir "$out/applyconfigurations" --output-pkg "$module/$out/applyconfigurations" "${pkgs[@]}"

inputs=()
for d in "${dirs[@]}"; do inputs+=(--input "${d#apis/}"); done
"$bin/client-gen" --go-header-file "$header" \
  --clientset-name versioned --input-base "$module/apis" "${inputs[@]}" \
  --output-dir "$out/clientset" --output-pkg "$module/$out/clientset" \
  --apply-configuration-package "$module/$out/applyconfigurations"

"$bin/lister-gen" --go-header-file "$header" \
  --output-dir "$out/listers" --output-pkg "$module/$out/listers" "${pkgs[@]}"

"$bin/informer-gen" --go-header-file "$header" \
  --output-dir "$out/informers" --output-pkg "$module/$out/informers" \
  --versioned-clientset-package "$module/$out/clientset/versioned" \
  --listers-package "$module/$out/listers" "${pkgs[@]}"

gofmt -s -w "$out" apis

# The CRD conformance test's CRDs: controller-gen (pinned) turns the
# test-only group into the CRD a real kube-apiserver serves, the reference
# apiloom's schema validation is compared with (test/crdconf).
crds=test/crdconf/testdata/crd
rm -rf "$crds"
go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 crd paths=./apis/crdconf/... output:crd:dir="$crds"
