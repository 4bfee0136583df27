// Package node is the local cluster's Kubernetes node: it registers a Node
// and its Lease through virtual-kubelet's node controller and runs every pod
// scheduled to it as real processes. It provides Start, the virtual-kubelet
// provider (one pod worker per pod) and the wiring of the roles that other
// packages hold: package podworker runs each pod's kubelet lifecycle (init
// containers, sidecars, restarts with back-off, probes, hooks, graceful
// deletion), package kubeletapi serves logs, exec and port-forward, package
// sandbox gives each pod a network namespace and runs its containers with
// runc, package podinputs resolves images, argv, environment and volumes,
// and package hostaccess decides which pods the node admits (settings that
// need root on the host, hostPath volumes; Config.AllowHostPrivileges and
// Config.SharedHostDirs).
package node
