#!/usr/bin/env bash
# Runs gotypes (see main.go) in a scratch module made from hack/k8s/go.mod, so it builds against
# exactly the k8s.io/kubernetes the stack's binaries come from, without touching that go.mod.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/main.go" "$work/"
cp "$here/../k8s/go.mod" "$here/../k8s/go.sum" "$work/"
sed -i 's#^module .*#module temporal-kcm/hack/gotypes#' "$work/go.mod"
cd "$work"
go mod tidy >/dev/null
go run . "$@"
