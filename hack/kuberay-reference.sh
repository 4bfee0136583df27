#!/usr/bin/env bash
# Builds KubeRay's ray-operator at a reference commit, for bench-scale's
# side-by-side runs (docs/dev/benchmarks.md, "Scale"). The sources are
# exported from a bare git mirror into a scratch directory outside this
# repository and removed afterwards: nothing of KubeRay is committed here.
#
# Environment:
#   KUBERAY_MIRROR  bare git repository of KubeRay (default /work/.mirror/ray-project+kuberay/repo)
#   KUBERAY_COMMIT  commit to build (default feeaf72)
#   KUBERAY_OUT     the binary to write (default ~/.cache/ray-operator/kuberay-<commit>/ray-operator)
# Prints the binary's path. Builds again only when the binary is missing.
set -euo pipefail

mirror="${KUBERAY_MIRROR:-/work/.mirror/ray-project+kuberay/repo}"
commit="${KUBERAY_COMMIT:-feeaf72}"
out="${KUBERAY_OUT:-${HOME}/.cache/ray-operator/kuberay-${commit}/ray-operator}"

if [[ -x "${out}" ]]; then
	echo "${out}"
	exit 0
fi
if ! git -C "${mirror}" rev-parse --verify --quiet "${commit}^{commit}" >/dev/null; then
	echo "kuberay-reference: commit ${commit} is not in ${mirror}" >&2
	exit 1
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/kuberay-${commit}.XXXXXX")"
trap 'rm -rf "${scratch}"' EXIT
# Only the ray-operator tree: a snapshot mirror may lack blobs elsewhere.
mkdir -p "${scratch}/ray-operator"
git -C "${mirror}" archive --format=tar "${commit}:ray-operator" | tar -x -C "${scratch}/ray-operator"

mkdir -p "$(dirname "${out}")"
# Its go.mod asks for the Go release installed here; GOTOOLCHAIN=local keeps
# go from fetching another one, -mod=mod lets it complete go.sum if needed.
(cd "${scratch}/ray-operator" &&
	GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o "${out}" .) >&2
echo "${out}"
