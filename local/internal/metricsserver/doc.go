// Package metricsserver runs metrics-server (sigs.k8s.io/metrics-server,
// built from its Go module at MetricsServerVersion) on the host for the
// local cluster, as a controlplane.Addon: it scrapes the node's kubelet API
// (/metrics/resource) and serves the metrics.k8s.io API through the API
// server's aggregation layer, so that `kubectl top` and
// HorizontalPodAutoscalers have pod and node figures. It listens on the
// node's address only, behind the selector-less Service
// kube-system/metrics-server and APIService v1beta1.metrics.k8s.io.
package metricsserver
