# shellcheck shell=bash
# Sourced by hack/update-codegen.sh (make generate, make verify): the
# protobuf step of the pipeline (go-to-protobuf, codegen/pipeline) runs
# protoc, which no Go module provides. Debian's protobuf-compiler is
# installed when none is on PATH (sudo when not root), as the other hack/lib
# scripts install their databases.
#
#   protoc_ensure    makes sure protoc is on PATH; prints its version

protoc_ensure() {
  if ! command -v protoc >/dev/null 2>&1; then
    echo "protoc: installing protobuf-compiler (Debian)" >&2
    local sudo=()
    if [[ $(id -u) != 0 ]]; then
      sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -qq >&2 &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null || {
      echo "protoc: could not install protobuf-compiler; install protoc (apt-get install protobuf-compiler, or https://github.com/protocolbuffers/protobuf/releases) and rerun" >&2
      return 1
    }
  fi
  echo "protoc: $(protoc --version)" >&2
}
