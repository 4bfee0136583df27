package dashboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// ErrAuthSecretMissing matches the error of a token-protected cluster whose
// auth Secret, or the token in it, is missing: without it every dashboard
// call would be refused. Controllers turn it into an event.
var ErrAuthSecretMissing = errors.New("auth secret missing")

// Access reaches the dashboard of a RayCluster: where it is, the token it
// wants, and a client. Every controller that talks to a dashboard goes
// through it.
type Access struct {
	// Secrets reads auth Secrets. It should read from the API server: the
	// operator caches only the Secrets it labels, while
	// authOptions.secretName may name a user's Secret.
	Secrets client.Reader
	// Clients makes a dashboard client for a URL and token.
	Clients ClientProvider
	// ClusterDomain is the cluster's DNS domain (empty: cluster.local).
	ClusterDomain string
	// Proxy, when set, makes clients reach the dashboard through the API
	// server (--use-kubernetes-proxy); Clients should then be built on
	// Proxy.Clients. Status fields keep the in-cluster URL.
	Proxy *KubeProxy
}

// URL is the address of cluster's dashboard: its head Service's DNS name
// and the head's dashboard port, "<svc>.<ns>.svc.<domain>:<port>".
func (a Access) URL(cluster *rayv1.RayCluster) string {
	port := strconv.Itoa(int(rayv1.DashboardPort(&cluster.Spec)))
	return naming.HeadServiceFQDN(cluster, a.ClusterDomain) + ":" + port
}

// Token is the auth token of a token-protected cluster, read from the
// Secret its Ray Pods read it from (authOptions.secretName or the Secret the
// operator generates); other clusters need none and get "".
func (a Access) Token(ctx context.Context, cluster *rayv1.RayCluster) (string, error) {
	if cluster == nil || !rayv1.IsAuthEnabled(&cluster.Spec) {
		return "", nil
	}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: naming.AuthSecretName(cluster)}
	secret := &corev1.Secret{}
	if err := a.Secrets.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("RayCluster %s/%s has token authentication, but its auth Secret %s is not found: %w",
				cluster.Namespace, cluster.Name, key, ErrAuthSecretMissing)
		}
		return "", fmt.Errorf("getting the auth Secret %s of RayCluster %s/%s: %w", key, cluster.Namespace, cluster.Name, err)
	}
	if len(secret.Data[raypod.AuthTokenSecretKey]) == 0 {
		return "", fmt.Errorf("the auth Secret %s of RayCluster %s/%s has no %q key: %w",
			key, cluster.Namespace, cluster.Name, raypod.AuthTokenSecretKey, ErrAuthSecretMissing)
	}
	return string(secret.Data[raypod.AuthTokenSecretKey]), nil
}

// Client is a client of cluster's dashboard at url (URL(cluster) when url
// is empty), with the cluster's token when it has one.
func (a Access) Client(ctx context.Context, cluster *rayv1.RayCluster, url string) (Client, error) {
	token, err := a.Token(ctx, cluster)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Proxy != nil && cluster == nil:
		return nil, errors.New("the dashboard is reached through the API server's proxy, which needs the RayCluster, and it is gone")
	case a.Proxy != nil:
		url = a.Proxy.DashboardURL(cluster)
	case url == "":
		url = a.URL(cluster)
	}
	return a.Clients(url, token)
}
