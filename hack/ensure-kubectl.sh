#!/usr/bin/env bash
# Makes sure a kubectl is on PATH for the end-to-end tests. Uses the one
# installed if there is one; otherwise builds kubectl v1.32 from the Go module
# proxy into $KUBECTL_CACHE (default ~/.cache/apiloom-kubectl) and prints the
# directory to prepend to PATH.
set -euo pipefail
if command -v kubectl >/dev/null 2>&1; then
  dirname "$(command -v kubectl)"; exit 0
fi
cache=${KUBECTL_CACHE:-$HOME/.cache/apiloom-kubectl}
ver=${KUBECTL_VERSION:-1.32.13}
if [[ ! -x $cache/kubectl ]]; then
  src=$cache/src; rm -rf "$src"; mkdir -p "$src"
  {
    echo "module apiloom/kubectl"; echo; echo "go 1.26"; echo; echo "require k8s.io/kubernetes v$ver"; echo "replace ("
    for s in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
      cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
      cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms \
      kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
      mount-utils pod-security-admission sample-apiserver; do
      echo "	k8s.io/$s => k8s.io/$s v0.${ver#1.}"
    done
    echo ")"
  } >"$src/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubectl"\n' >"$src/tools.go"
  (cd "$src" && go mod tidy >&2 && go build -mod=mod -o "$cache/kubectl" k8s.io/kubernetes/cmd/kubectl) >&2
fi
echo "$cache"
