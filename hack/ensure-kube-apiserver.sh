#!/usr/bin/env bash
# Makes sure kube-apiserver and kube-controller-manager v1.37.1 exist for the
# tests that run apiloom behind a real kube-apiserver (internal/hostcluster:
# aggregated mode, manifests dry-run). Builds both once, in one go build, from
# the Go module proxy into $KUBE_APISERVER_CACHE (default ~/.cache/apiloom-peer,
# the directory the benchmark peer script uses, so its binaries are reused)
# and prints that directory; build output goes to stderr. etcd is not needed:
# the harness runs it in-process (internal/etcdtest).
set -euo pipefail
cache=${KUBE_APISERVER_CACHE:-$HOME/.cache/apiloom-peer}
ver=${KUBE_APISERVER_VERSION:-1.37.1}
if [[ ! -x $cache/kube-apiserver || ! -x $cache/kube-controller-manager ]]; then
  src=$cache/src-kas; rm -rf "$src"; mkdir -p "$src"
  {
    echo "module apiloom/kube-apiserver"; echo; echo "go 1.26"; echo; echo "require k8s.io/kubernetes v$ver"; echo "replace ("
    # k8s.io/kubernetes requires its staging modules at v0.0.0; point them at the release.
    for s in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
      cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
      cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt \
      kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
      mount-utils pod-security-admission sample-apiserver streaming; do
      echo "	k8s.io/$s => k8s.io/$s v0.${ver#1.}"
    done
    echo ")"
  } >"$src/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n)\n' >"$src/tools.go"
  # The version a release build stamps, so /version reads v$ver (clients parse it).
  v=k8s.io/component-base/version
  ldflags="-X $v.gitVersion=v$ver -X $v.gitMajor=${ver%%.*} -X $v.gitMinor=$(cut -d. -f2 <<<"$ver")"
  (cd "$src" && go mod tidy >&2 && go build -mod=mod -ldflags "$ldflags" -o "$cache/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager) >&2
fi
echo "$cache"
