package installcheck

import (
	"flag"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

// DeploymentCheck says what CheckDeployment expects.
type DeploymentCheck struct {
	// Identity is the ServiceAccount the Pods must run as.
	Identity Identity
	// Objects are the other installed objects: a --config file is read from
	// the ConfigMap mounted at its path.
	Objects []*unstructured.Unstructured
}

// CheckDeployment parses the operator container's arguments and environment
// with the operator's own parser, and checks that the ports and probes match
// the addresses they set, that the Pod runs as the ServiceAccount, holds
// leader election, and is locked down. It returns the resolved settings.
func CheckDeployment(t testing.TB, d *appsv1.Deployment, check DeploymentCheck) operator.Settings {
	t.Helper()
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != check.Identity.ServiceAccount {
		t.Errorf("serviceAccountName = %q, want %q", spec.ServiceAccountName, check.Identity.ServiceAccount)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if diff := cmp.Diff([]string{BinaryPath}, c.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	settings := ResolveContainer(t, spec, check)
	if !settings.Config.LeaderElectionEnabled() {
		t.Error("leader election is off; the Deployment must run with --enable-leader-election")
	}
	checkPorts(t, c, settings)
	checkLockedDown(t, spec, c)
	return settings
}

// ResolveContainer resolves the settings the operator container of spec
// runs with: its arguments parsed by the operator's flag parser (a --config
// file read from the mounted ConfigMap) and its environment (literal
// values, and the Pod's namespace from the downward API).
func ResolveContainer(t testing.TB, spec corev1.PodSpec, check DeploymentCheck) operator.Settings {
	t.Helper()
	c := spec.Containers[0]
	fs := flag.NewFlagSet(BinaryPath, flag.ContinueOnError)
	flags := operator.BindFlags(fs)
	args := localConfigFile(t, spec, c, c.Args, check.Objects)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the operator rejects the Deployment's args %q: %v", c.Args, err)
	}
	if fs.NArg() != 0 {
		t.Errorf("args %q leave positional arguments %q, which the operator ignores", c.Args, fs.Args())
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		// The downward API's namespace (POD_NAMESPACE) is the Identity's.
		if f := e.ValueFrom; f != nil && f.FieldRef != nil && f.FieldRef.FieldPath == "metadata.namespace" {
			env[e.Name] = check.Identity.Namespace
		}
	}
	settings, err := flags.Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("resolving the Deployment's flags %q: %v", c.Args, err)
	}
	return settings
}

// localConfigFile rewrites --config=<path> to a local copy of the file the
// container finds there: the key of the ConfigMap mounted at its directory.
func localConfigFile(t testing.TB, spec corev1.PodSpec, c corev1.Container, args []string, objs []*unstructured.Unstructured) []string {
	t.Helper()
	args = slices.Clone(args)
	for i, arg := range args {
		path, ok := strings.CutPrefix(arg, "--config=")
		if !ok {
			continue
		}
		data := mountedConfigMapFile(t, spec, c, path, objs)
		local := filepath.Join(t.TempDir(), filepath.Base(path))
		if err := os.WriteFile(local, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		args[i] = "--config=" + local
	}
	return args
}

func mountedConfigMapFile(t testing.TB, spec corev1.PodSpec, c corev1.Container, path string, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		key, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			for _, o := range objs {
				if o.GetKind() != "ConfigMap" || o.GetName() != v.ConfigMap.Name {
					continue
				}
				data, found, err := unstructured.NestedString(o.Object, "data", key)
				if err != nil || !found {
					t.Fatalf("ConfigMap %s has no key %q for --config=%s (err %v)", o.GetName(), key, path, err)
				}
				return data
			}
			t.Fatalf("--config=%s: ConfigMap %s, mounted at %s, is not installed", path, v.ConfigMap.Name, m.MountPath)
		}
	}
	t.Fatalf("--config=%s is not in a mounted ConfigMap", path)
	return ""
}

// checkPorts checks that the named container ports and the probes use the
// metrics and probe addresses of settings.
func checkPorts(t testing.TB, c corev1.Container, settings operator.Settings) {
	t.Helper()
	cfg := settings.Config
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if got, want := ports["http"], addrPort(t, cfg.MetricsAddr); got != want {
		t.Errorf("metrics containerPort http = %d, want %d (--metrics-addr=%s)", got, want, cfg.MetricsAddr)
	}
	probePort := addrPort(t, cfg.ProbeAddr)
	for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("probe %s is missing or not an HTTP GET", name)
			continue
		}
		if probe.HTTPGet.Path != name {
			t.Errorf("probe path = %q, want %q", probe.HTTPGet.Path, name)
		}
		port := probe.HTTPGet.Port.IntVal
		if probe.HTTPGet.Port.StrVal != "" {
			port = ports[probe.HTTPGet.Port.StrVal]
		}
		if port != probePort {
			t.Errorf("probe %s port = %d, want %d (--health-probe-bind-address=%s)", name, port, probePort, cfg.ProbeAddr)
		}
	}
}

// checkLockedDown checks the security context and the memory bounds: the
// Pod or the container must run as non-root, the container without
// privilege escalation, with a memory limit (which is also the request
// when none is given).
func checkLockedDown(t testing.TB, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the container must set allowPrivilegeEscalation: false")
	}
	podNonRoot := spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot
	containerNonRoot := sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
	if !podNonRoot && !containerNonRoot {
		t.Error("the Pod or the container must set runAsNonRoot: true")
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Error("the container must limit memory")
	}
}

func addrPort(t testing.TB, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return int32(n)
}

// CheckWebhookServing checks that the operator container of d can serve
// the webhooks it is configured for: a container port webhook-server on
// the webhook port, and the certificate Secret mounted at the cert dir.
func CheckWebhookServing(t testing.TB, d *appsv1.Deployment, hooks webhooks.Options) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.Name == "webhook-server" && int(p.ContainerPort) == hooks.Port
	}) {
		t.Errorf("ports %v lack webhook-server on --webhook-port %d", c.Ports, hooks.Port)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if !slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == hooks.SecretName && mounts[v.Name] == hooks.CertDir
	}) {
		t.Errorf("no volume mounts the certificate Secret %s at --webhook-cert-dir %s", hooks.SecretName, hooks.CertDir)
	}
}
