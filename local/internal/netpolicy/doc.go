// Package netpolicy enforces Kubernetes NetworkPolicies on the local node
// with sigs.k8s.io/kube-network-policies, run in-process as a library: its
// controller watches NetworkPolicies, Namespaces and Pods and sends the
// first packet of each new connection to or from a Pod that a policy
// selects to an nfqueue, where it is accepted or dropped by the policies.
//
// Its own nftables chains hook postrouting, which sees pod-to-pod traffic on
// the node's bridge because the sandbox host turns bridge-nf-call-iptables
// on (br_netfilter), and pod traffic that leaves the node. A pod's traffic to
// the node itself (its address is the bridge's: CoreDNS, the API server and
// any host listener are there) never reaches postrouting; this package adds
// an input chain that sends new connections from the pod range arriving on
// the bridge to the same queue, so that egress policies cover the node too.
package netpolicy
