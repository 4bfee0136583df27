package podinputs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fetcher gets each Secret and ConfigMap of one namespace at most once per
// pass, so that every reference to an object sees the same version of it.
type fetcher struct {
	objs       Objects
	namespace  string
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func newFetcher(objs Objects, namespace string) *fetcher {
	return &fetcher{objs: objs, namespace: namespace,
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

// configMap returns the named ConfigMap, or nil when it does not exist and
// the reference is optional.
func (f *fetcher) configMap(ctx context.Context, name string, optional *bool) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[name]; ok {
		return cm, nil
	}
	cm, err := f.objs.ConfigMap(ctx, f.namespace, name)
	if err != nil {
		return nil, missing(err, "configmap", name, optional)
	}
	f.configMaps[name] = cm
	return cm, nil
}

// secret returns the named Secret, or nil when it does not exist and the
// reference is optional.
func (f *fetcher) secret(ctx context.Context, name string, optional *bool) (*corev1.Secret, error) {
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	s, err := f.objs.Secret(ctx, f.namespace, name)
	if err != nil {
		return nil, missing(err, "secret", name, optional)
	}
	f.secrets[name] = s
	return s, nil
}

// missing turns a failed get into nil (optional and not found) or a
// *ConfigError worded as a kubelet words it.
func missing(err error, kind, name string, optional *bool) error {
	notFound := apierrors.IsNotFound(err)
	if notFound && isTrue(optional) {
		return nil
	}
	ce := configErrorf("%s %q not found", kind, name)
	if !notFound {
		ce = configErrorf("failed to get %s %q: %v", kind, name, err)
	}
	ce.Err = err
	return ce
}

func isTrue(b *bool) bool { return b != nil && *b }
