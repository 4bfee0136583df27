package metricsserver

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
)

// The Service in front of metrics-server and the API it serves.
const (
	serviceNamespace = metav1.NamespaceSystem
	serviceName      = "metrics-server"
	// serviceHost is the name the aggregation layer verifies metrics-server's
	// certificate against.
	serviceHost    = serviceName + "." + serviceNamespace + ".svc"
	servicePort    = 443
	portName       = "https"
	apiServiceName = "v1beta1.metrics.k8s.io"
)

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// registerAPI creates the Service, its EndpointSlice (metrics-server on
// the node's address and port) and the APIService, unless they exist.
func registerAPI(ctx context.Context, host *controlplane.Host, port int, caPEM []byte) error {
	clientset, err := kubernetes.NewForConfig(host.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating a client for the metrics-server Service: %w", err)
	}
	dyn, err := dynamic.NewForConfig(host.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating a client for the metrics APIService: %w", err)
	}
	// kube-system is created shortly after the API server is ready.
	return host.WaitFor(ctx, "the metrics-server Service", func(ctx context.Context) error {
		return createObjects(ctx, clientset, dyn, host.Network(), port, caPEM)
	})
}

func createObjects(ctx context.Context, clientset kubernetes.Interface, dyn dynamic.Interface, n *controlplane.NodeNetwork, port int, caPEM []byte) error {
	_, err := clientset.CoreV1().Services(serviceNamespace).Create(ctx, service(port), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Service %s/%s: %w", serviceNamespace, serviceName, err)
	}
	slicePort := discoveryv1.EndpointPort{Name: ptr.To(portName), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(port))} //nolint:gosec // a port number
	_, err = clientset.DiscoveryV1().EndpointSlices(serviceNamespace).Create(ctx, netaddons.NodeSlice(serviceNamespace, serviceName, n, slicePort), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the EndpointSlice of Service %s/%s: %w", serviceNamespace, serviceName, err)
	}
	_, err = dyn.Resource(apiServiceGVR).Create(ctx, apiService(caPEM), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating APIService %s: %w", apiServiceName, err)
	}
	return nil
}

// service is the selector-less Service of metrics-server.
func service(port int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace, Labels: map[string]string{"k8s-app": serviceName}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: portName, Protocol: corev1.ProtocolTCP, Port: servicePort, TargetPort: intstr.FromInt(port),
		}}},
	}
}

// apiService registers metrics.k8s.io/v1beta1 as served by the Service,
// whose certificate caPEM verifies.
func apiService(caPEM []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": apiServiceName, "labels": map[string]any{"k8s-app": serviceName}},
		"spec": map[string]any{
			"group":                "metrics.k8s.io",
			"version":              "v1beta1",
			"service":              map[string]any{"namespace": serviceNamespace, "name": serviceName, "port": int64(servicePort)},
			"caBundle":             base64.StdEncoding.EncodeToString(caPEM),
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
		},
	}}
}
