#!/usr/bin/env bash
# Fails when the operator module depends on the local cluster's stack or on
# the monitoring tests' Prometheus: the operator's go.mod must not require the
# modules only the local module (local/go.mod) or the monitoring test module
# (test/monitoring/go.mod) needs, and no package or test of the operator module
# may import those modules. fsnotify is not among them: the
# operator uses it through controller-runtime's certificate watcher.
set -euo pipefail
cd "$(dirname "$0")/.."

local_only=(
	github.com/google/nftables
	github.com/vishvananda/netlink
	github.com/vishvananda/netns
	github.com/opencontainers/runtime-spec
	github.com/virtual-kubelet/virtual-kubelet
	k8s.io/cri-streaming
	k8s.io/kube-proxy
	github.com/moby/sys/mountinfo
	github.com/distribution/reference
	sigs.k8s.io/sig-storage-lib-external-provisioner/v13
	sigs.k8s.io/kube-network-policies
	github.com/florianl/go-nfqueue
)
# Only the monitoring test module (test/monitoring) needs these: Prometheus
# itself is a heavy dependency the operator binary must not link.
monitoring_only=(
	github.com/prometheus/prometheus
	github.com/prometheus-operator/prometheus-operator
	github.com/ray-operator/ray-operator/test/monitoring
)
pattern="$(printf '%s|' "${local_only[@]}" "${monitoring_only[@]}" github.com/ray-operator/ray-operator/local)"
pattern="^(${pattern%|})(/|\$)"

status=0
modfile="$(go mod edit -json)"
packages="$(go list -deps -test ./...)"
required="$(echo "$modfile" | sed -n 's/^[[:space:]]*"Path": "\(.*\)",\{0,1\}$/\1/p' | grep -E "$pattern" || true)"
if [ -n "$required" ]; then
	echo "The operator module's go.mod requires modules only the local cluster or the monitoring tests need:"
	echo "$required" | sed 's/^/  /'
	status=1
fi
imported="$(echo "$packages" | grep -E "$pattern" || true)"
if [ -n "$imported" ]; then
	echo "Packages or tests of the operator module import the local cluster's stack or the monitoring tests' modules:"
	echo "$imported" | sed 's/^/  /'
	status=1
fi
[ "$status" -eq 0 ] && echo "operator module: no dependency on the local cluster's stack or on Prometheus"
exit "$status"
