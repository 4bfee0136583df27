package testenv

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// defaultSchemeAdders are the types every test client knows: client-go's
// built-in kinds, CRDs, and the project's API.
func defaultSchemeAdders() []func(*runtime.Scheme) error {
	return []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		rayv1.AddToScheme,
	}
}

// NewScheme returns a fresh scheme with the default types and those of add.
func NewScheme(add ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, addToScheme := range append(defaultSchemeAdders(), add...) {
		if err := addToScheme(scheme); err != nil {
			return nil, fmt.Errorf("building the test scheme: %w", err)
		}
	}
	return scheme, nil
}
