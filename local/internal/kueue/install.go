package kueue

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
)

// servicePort is the webhook Service's port (config/components/webhook's
// service.yaml), which the webhook configurations' clientConfigs leave at
// its default.
const servicePort = 443

const portName = "https"

// crdTimeout bounds the wait for Kueue's CRDs to be established.
const crdTimeout = time.Minute

// install creates Kueue's namespace, its webhook Service with an
// EndpointSlice for the node's webhookPort, the Secret for its
// certificates, its CRDs and its webhook configurations.
func install(ctx context.Context, host *controlplane.Host, m *Manifests, webhookPort int) error {
	clientset, err := kubernetes.NewForConfig(host.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating a client for Kueue's objects: %w", err)
	}
	err = host.WaitFor(ctx, "Kueue's namespace, webhook Service and certificate Secret", func(ctx context.Context) error {
		if err := createNamespace(ctx, clientset); err != nil {
			return err
		}
		if n := host.Network(); n != nil {
			if err := createService(ctx, clientset, n, webhookPort); err != nil {
				return err
			}
		}
		_, err := clientset.CoreV1().Secrets(Namespace).Create(ctx, m.CertSecret, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Secret %s/%s: %w", Namespace, SecretName, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(host.RESTConfig(), envtest.CRDInstallOptions{CRDs: m.CRDs, MaxTime: crdTimeout}); err != nil {
		return fmt.Errorf("installing Kueue's CRDs: %w", err)
	}
	hooks := clientset.AdmissionregistrationV1()
	if _, err := hooks.MutatingWebhookConfigurations().Create(ctx, m.Mutating, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating MutatingWebhookConfiguration %s: %w", m.Mutating.Name, err)
	}
	if _, err := hooks.ValidatingWebhookConfigurations().Create(ctx, m.Validating, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ValidatingWebhookConfiguration %s: %w", m.Validating.Name, err)
	}
	return nil
}

// createNamespace creates Kueue's namespace.
func createNamespace(ctx context.Context, clientset kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	return nil
}

// createService creates the selector-less webhook Service whose
// EndpointSlice is the node's address: Kueue runs there as a process, not
// in a Pod a selector would find.
func createService(ctx context.Context, clientset kubernetes.Interface, n *controlplane.NodeNetwork, webhookPort int) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: Namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: portName, Protocol: corev1.ProtocolTCP, Port: servicePort, TargetPort: intstr.FromInt(webhookPort),
		}}},
	}
	if _, err := clientset.CoreV1().Services(Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Service %s/%s: %w", Namespace, ServiceName, err)
	}
	port := discoveryv1.EndpointPort{Name: ptr.To(portName), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(webhookPort))} //nolint:gosec // a port number
	_, err := clientset.DiscoveryV1().EndpointSlices(Namespace).Create(ctx, netaddons.NodeSlice(Namespace, ServiceName, n, port), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the EndpointSlice of Service %s/%s: %w", Namespace, ServiceName, err)
	}
	return nil
}
