#!/usr/bin/env bash
# Builds Helm v3 and Helm v4 from the Go module proxy for test/helm (make
# test-helm), once: each in a throwaway module of its own under
# $APILOOM_TOOLS_CACHE (default ~/.cache/apiloom-tools), at
# helm-v<version>/helm; a cached binary is reused. Prints the two binaries'
# paths, Helm v3's first, one a line. A cold build of each takes a few
# minutes on two cores (docs/helm.md).
#
#   HELM3_VERSION, HELM4_VERSION   the versions to build (default below)
set -euo pipefail
GO=${GO:-go}
cache=${APILOOM_TOOLS_CACHE:-$HOME/.cache/apiloom-tools}

# build MAJOR VERSION: prints the binary's path, building it when missing.
# The ldflags are those of Helm's own Makefile: the version `helm version`
# prints, and (v3) the Kubernetes version it assumes without a cluster.
build() {
  local major=$1 ver=$2 dir=$cache/helm-v$2
  if [[ ! -x $dir/helm ]]; then
    local src=$dir/src start=$SECONDS
    rm -rf "$src"; mkdir -p "$src"
    printf 'module apiloom/helm%s\n\ngo 1.26\n\nrequire helm.sh/helm/v%s v%s\n' "$major" "$major" "$ver" >"$src/go.mod"
    printf '//go:build tools\n\npackage tools\n\nimport _ "helm.sh/helm/v%s/cmd/helm"\n' "$major" >"$src/tools.go"
    (
      cd "$src"
      "$GO" mod tidy
      local v=helm.sh/helm/v$major/internal/version
      local ldflags="-w -s -X $v.version=v$ver"
      if [[ $major == 3 ]]; then
        local cg maj min
        cg=$("$GO" list -m -f '{{.Version}}' k8s.io/client-go) # v0.MINOR.PATCH
        cg=${cg#v0.}; maj=1; min=${cg%%.*}
        ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$maj -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$min"
        ldflags+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$maj -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$min"
      fi
      # Into a temporary name first: a build that dies leaves no binary
      # that a later run would take for a good one.
      CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$dir/helm.tmp" "helm.sh/helm/v$major/cmd/helm"
      mv "$dir/helm.tmp" "$dir/helm"
    ) >&2
    echo "ensure-helm: built Helm v$ver in $((SECONDS - start))s: $dir/helm" >&2
  fi
  echo "$dir/helm"
}

build 3 "${HELM3_VERSION:-3.22.0}"
build 4 "${HELM4_VERSION:-4.3.2}"
