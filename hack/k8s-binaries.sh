#!/usr/bin/env bash
# Builds the control-plane binaries (etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager, kube-proxy, kubectl) from Go modules into a cache outside the
# work tree, and prints the directory that holds them. A second run only checks
# that the files are there.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
k8s_version=$(awk '/^require k8s.io\/kubernetes/ {print $3}' "$root/hack/k8s/go.mod")
etcd_version=$(awk '/^require go.etcd.io\/etcd\/server\/v3/ {print $3}' "$root/hack/etcd/go.mod")
cache=${RAY_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-operator}
dir="$cache/k8s-$k8s_version-etcd-$etcd_version"
mkdir -p "$dir"
# Several test runs may start at once on one machine (parallel make targets,
# developers' worktrees): one builds, the others wait for it.
exec 9>"$dir/.lock"
flock 9

build() { # build <module dir> <package> <output name> [ldflags]
	local out="$dir/$3"
	[[ -x "$out" ]] && return 0
	echo "building $3 (first run only)" >&2
	(cd "$root/hack/$1" && CGO_ENABLED=0 "$root/hack/timings.sh" run tool "$3" -- go build -trimpath -ldflags "-s -w ${4:-}" -o "$out.tmp" "$2")
	mv "$out.tmp" "$out"
}

version_flags="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$k8s_version" | cut -d. -f2)"
build etcd go.etcd.io/etcd/server/v3 etcd
build k8s k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$version_flags"
build k8s k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler "$version_flags"
build k8s k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager "$version_flags"
build k8s k8s.io/kubernetes/cmd/kube-proxy kube-proxy "$version_flags"
build k8s k8s.io/kubernetes/cmd/kubectl kubectl "$version_flags"
echo "$dir"
