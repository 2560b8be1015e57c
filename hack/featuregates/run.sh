#!/usr/bin/env bash
# Regenerates workers/feature-gate-table.ts from the pinned k8s.io/kubernetes (hack/k8s/go.mod),
# in a scratch module so that go.mod stays untouched: `hack/featuregates/run.sh` after a version bump.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
minor=$(node -e 'const v=require(process.argv[1]).kubernetes.replace(/^v/,"").split(".");console.log(v[0]+"."+v[1])' "$here/../versions.json")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/main.go" "$here/types.go" "$work/"
cp "$here/../k8s/go.mod" "$here/../k8s/go.sum" "$work/"
sed -i 's#^module .*#module temporal-kcm/hack/featuregates#' "$work/go.mod"
cd "$work"
go mod tidy >/dev/null 2>&1
go run . "$minor" > "$here/../../workers/feature-gate-table.ts"
