#!/usr/bin/env bash
# Regenerates starter/upstream-flags.ts from the pinned k8s.io/kubernetes (hack/k8s/go.mod), in a
# scratch module so that go.mod stays untouched: `hack/upstreamflags/run.sh` after a version bump.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(node -e 'console.log(require(process.argv[1]).kubernetes)' "$here/../versions.json")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/main.go" "$work/"
cp "$here/../k8s/go.mod" "$here/../k8s/go.sum" "$work/"
sed -i 's#^module .*#module temporal-kcm/hack/upstreamflags#' "$work/go.mod"
cd "$work"
go mod tidy >/dev/null 2>&1
go run . "$version" > "$here/../../starter/upstream-flags.ts"
