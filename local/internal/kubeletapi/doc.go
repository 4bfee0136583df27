// Package kubeletapi serves the part of the kubelet's HTTPS API that the
// API server proxies `kubectl logs`, `kubectl exec`, `kubectl attach` and
// `kubectl port-forward` to, for the pods of the local node, and the
// resource endpoints metrics-server scrapes (/metrics/resource and
// /stats/summary). Exec, attach and port-forward speak the kubelet's own
// streaming protocols through k8s.io/cri-streaming; logs are read from the
// CRI-format files package containerlog writes. The node supplies the pods
// through the Pods interface and their figures through Usage.
package kubeletapi
