package main

import "path/filepath"

// target says which cluster ray-local runs the operator against.
type target struct {
	// local is true when ray-local must start its own control plane.
	local bool
	// reason explains the choice, for the first log line.
	reason string
}

// environment is what chooseTarget looks at, gathered in main so that the
// choice is a pure function.
type environment struct {
	kubeconfigEnv     string // $KUBECONFIG
	homeKubeconfig    string // ~/.kube/config
	homeKubeconfigSet bool   // whether that file exists
	inCluster         bool   // $KUBERNETES_SERVICE_HOST is set
	ownKubeconfig     string // the kubeconfig ray-local writes
	forceLocal        bool   // --local
}

// chooseTarget picks the user's cluster when there is one, and a local
// control plane otherwise. A $KUBECONFIG naming ray-local's own kubeconfig
// (left from an earlier run whose API server is gone) means local too.
func chooseTarget(env environment) target {
	switch {
	case env.forceLocal:
		return target{local: true, reason: "--local given"}
	case env.kubeconfigEnv != "" && samePath(env.kubeconfigEnv, env.ownKubeconfig):
		return target{local: true, reason: "KUBECONFIG names ray-local's own kubeconfig; starting its control plane again"}
	case env.kubeconfigEnv != "":
		return target{reason: "using the cluster of KUBECONFIG=" + env.kubeconfigEnv}
	case env.homeKubeconfigSet:
		return target{reason: "using the cluster of " + env.homeKubeconfig}
	case env.inCluster:
		return target{reason: "running in a cluster; using its service account"}
	default:
		return target{local: true, reason: "no kubeconfig found; starting a local control plane"}
	}
}

// samePath reports whether two paths name the same file location.
func samePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
