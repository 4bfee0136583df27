package testenv

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// settings collects what the Options ask for.
type settings struct {
	schemeAdders []func(*runtime.Scheme) error
	crdDirs      []string
	crdDirsSet   bool
	gatewayAPI   bool
	auditLog     string
	full         bool
	nodes        int
	log          io.Writer
}

// Option changes how Start and New start the environment.
type Option func(*settings)

// WithScheme adds types to the client's scheme (client-go's and the project's
// API types are always there).
func WithScheme(add ...func(*runtime.Scheme) error) Option {
	return func(s *settings) { s.schemeAdders = append(s.schemeAdders, add...) }
}

// WithCRDDirs installs the CRDs in dirs instead of <module root>/config/crd/bases.
// With no dirs, no CRD is installed.
func WithCRDDirs(dirs ...string) Option {
	return func(s *settings) {
		s.crdDirs = dirs
		s.crdDirsSet = true
	}
}

// WithGatewayAPI also installs the standard Gateway API CRDs
// (gateway.networking.k8s.io, from the gateway-api module the operator is
// built with) and adds their types to the scheme, for tests of RayService
// incremental upgrades. No gateway controller runs: tests set the objects'
// statuses as one would.
func WithGatewayAPI() Option {
	return func(s *settings) {
		s.gatewayAPI = true
		s.schemeAdders = append(s.schemeAdders, gwv1.Install)
	}
}

// WithAuditLog makes the API server write an audit log (JSON lines, one
// per request at the Metadata level: user, verb, resource, object, time) to
// path, so that tests can tell who wrote what. Bare API server only.
func WithAuditLog(path string) Option {
	return func(s *settings) { s.auditLog = path }
}

// WithFullControlPlane starts kube-scheduler, kube-controller-manager and
// kwok with the given number of simulated nodes besides etcd and
// kube-apiserver, for tests that need pods scheduled and Running, owner
// garbage collection or batch Jobs that get pods. It costs a few seconds more
// than a bare API server.
func WithFullControlPlane(nodes int) Option {
	return func(s *settings) {
		s.full = true
		s.nodes = nodes
	}
}

// WithLog sends the control-plane processes' output to w (default: discarded,
// unless KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true for a bare environment).
func WithLog(w io.Writer) Option {
	return func(s *settings) { s.log = w }
}

// newSettings applies opts to the defaults.
func newSettings(opts []Option) *settings {
	s := &settings{}
	for _, opt := range opts {
		opt(s)
	}
	return s
}
