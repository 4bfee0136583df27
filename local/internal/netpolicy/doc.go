// Package netpolicy enforces Kubernetes NetworkPolicies on the local node
// with sigs.k8s.io/kube-network-policies, run in-process as a library: its
// controller watches NetworkPolicies, Namespaces and Pods and reads an
// nfqueue, accepting or dropping each packet it gets as the policies of
// the source and destination Pods say.
//
// The rules that send packets to that queue are this package's
// (installDataplane), not kube-network-policies': its rules use nftables'
// queue statement, which this project's kernels lack (CONFIG_NFT_QUEUE is
// off; `nft add rule ... queue num N` fails with "No such file or
// directory"), while the xtables NFQUEUE target is there and nftables rules
// can use it through nft_compat. They send the first packet of every new
// connection of the pod range, not only of the Pods a policy selects:
// kube-network-policies keeps that set in its own table, which is not
// written here. A Pod no policy selects is let through by the controller.
//
// Pod-to-pod traffic on the node's bridge reaches the postrouting hook
// because the sandbox host turns bridge-nf-call-iptables on (br_netfilter).
// A pod's traffic to the node itself (the bridge's address: CoreDNS, the API
// server, any host listener) never reaches postrouting; an input chain
// judges it, so egress policies cover the node too.
package netpolicy
