package netpolicy

import (
	coreinformers "k8s.io/client-go/informers/core/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// kube-network-policies' event handlers on Pods and NetworkPolicies do one
// thing: schedule a rewrite of its nftables table, which the kernels this
// project runs on refuse (no queue statement, see the package comment), so
// that every change of a selected Pod or of a policy would log the refusal,
// with a stack trace, five times. The verdicts need none of it: they read
// the listers, and installDataplane's rules do not depend on that table.
// These wrappers give the controller its informers, listers and indexers
// but keep its handlers off them.

// withoutHandlers is a shared informer on which AddEventHandler adds a
// handler that does nothing.
type withoutHandlers struct {
	cache.SharedIndexInformer
}

func (w withoutHandlers) AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return w.SharedIndexInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{})
}

type podsWithoutHandlers struct{ coreinformers.PodInformer }

func (p podsWithoutHandlers) Informer() cache.SharedIndexInformer {
	return withoutHandlers{p.PodInformer.Informer()}
}

func (p podsWithoutHandlers) Lister() corelisters.PodLister { return p.PodInformer.Lister() }

type policiesWithoutHandlers struct {
	networkinginformers.NetworkPolicyInformer
}

func (p policiesWithoutHandlers) Informer() cache.SharedIndexInformer {
	return withoutHandlers{p.NetworkPolicyInformer.Informer()}
}

func (p policiesWithoutHandlers) Lister() networkinglisters.NetworkPolicyLister {
	return p.NetworkPolicyInformer.Lister()
}
