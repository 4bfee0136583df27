package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ray-operator/ray-operator/internal/auditlog"
)

// pollInterval is how often readiness is checked while starting.
const pollInterval = 100 * time.Millisecond

// serviceClusterIPRange is the Service IP range of the local cluster.
const serviceClusterIPRange = "10.96.0.0/16"

// startAPIServer starts etcd and kube-apiserver, writes the kubeconfig and
// waits until the API server is ready.
func (cp *ControlPlane) startAPIServer(ctx context.Context, opts *Options, creds *credentials, etcdClient, etcdPeer, apiPort int) error {
	etcdURL, err := cp.startEtcd(opts, creds, etcdClient, etcdPeer)
	if err != nil {
		return err
	}
	cp.APIServerURL = opts.Network.apiServerURL(apiPort)
	args, err := apiServerFlags(opts, creds, etcdURL, apiPort)
	if err != nil {
		return err
	}
	if err := cp.run(opts, binAPIServer, filepath.Join(opts.BinDir, binAPIServer), args); err != nil {
		return err
	}
	if err := writeKubeconfig(opts.KubeconfigPath, cp.APIServerURL, creds); err != nil {
		return err
	}
	cp.RESTConfig = &rest.Config{
		Host:            cp.APIServerURL,
		BearerToken:     creds.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: creds.servingCAData},
		QPS:             1000,
		Burst:           2000,
	}
	return cp.waitAPIServerReady(ctx)
}

// startEtcd starts etcd with its client and peer URLs on 127.0.0.1 over
// TLS, taking clients with a certificate of its CA only (its metrics are
// served on the client URL), and returns the client URL.
func (cp *ControlPlane) startEtcd(opts *Options, creds *credentials, clientPort, peerPort int) (string, error) {
	clientURL := "https://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "https://127.0.0.1:" + strconv.Itoa(peerPort)
	args := append([]string{
		"--data-dir=" + filepath.Join(opts.StateDir, "etcd"),
		"--unsafe-no-fsync=true",
	}, creds.etcd.etcdArgs(clientURL, peerURL)...)
	cp.EtcdURL = clientURL
	return clientURL, cp.run(opts, binEtcd, filepath.Join(opts.BinDir, binEtcd), args)
}

// apiServerFlags are kube-apiserver's flags: serving on port of the address
// opts.Network.apiServerArgs name, with the token file and service account
// key of creds; anonymous requests are refused, so that only those holding
// a token or certificate learn anything.
func apiServerFlags(opts *Options, creds *credentials, etcdURL string, port int) ([]string, error) {
	audit, err := auditArgs(opts.AuditLogPath)
	if err != nil {
		return nil, err
	}
	args := append(audit,
		"--etcd-servers="+etcdURL,
	)
	args = append(args, creds.etcd.apiServerArgs()...)
	args = append(args,
		"--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+creds.servingCert,
		"--tls-private-key-file="+creds.servingKey,
		"--anonymous-auth=false",
		"--token-auth-file="+creds.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer="+opts.Network.apiServerURL(port),
		"--service-account-key-file="+creds.saKey,
		"--service-account-signing-key-file="+creds.saKey,
		"--service-cluster-ip-range="+serviceClusterIPRange,
		"--allow-privileged=true",
		"--cert-dir="+filepath.Join(opts.StateDir, "pki"),
	)
	args = append(args, workloadAPIServerArgs()...)
	return append(args, opts.Network.apiServerArgs(creds)...), nil
}

// auditArgs are the kube-apiserver flags of an audit log at path, none
// when path is empty.
func auditArgs(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	flags, err := auditlog.APIServerArgs(path)
	if err != nil {
		return nil, err
	}
	args := make([]string, 0, len(flags))
	for name, value := range flags {
		args = append(args, "--"+name+"="+value)
	}
	sort.Strings(args)
	return args, nil
}

// waitAPIServerReady polls /readyz until it answers ok.
func (cp *ControlPlane) waitAPIServerReady(ctx context.Context) error {
	clientset, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("creating API server client: %w", err)
	}
	return cp.waitFor(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		_, err := clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// startControllers starts kube-scheduler and kube-controller-manager
// without waiting for them.
func (cp *ControlPlane) startControllers(opts *Options, creds *credentials, schedulerPort, kcmPort int) error {
	common := []string{
		"--kubeconfig=" + opts.KubeconfigPath,
		"--authentication-kubeconfig=" + opts.KubeconfigPath,
		"--authorization-kubeconfig=" + opts.KubeconfigPath,
		// Clients authenticate with a token, so there is no client CA to
		// look up in kube-system/extension-apiserver-authentication.
		"--authentication-skip-lookup=true",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		// The API server's certificate covers 127.0.0.1: clients verify
		// it, and nothing writes a self-signed one into the state
		// directory.
		"--tls-cert-file=" + creds.servingCert,
		"--tls-private-key-file=" + creds.servingKey,
	}
	if opts.ComponentQPS > 0 {
		common = append(common, "--kube-api-qps="+strconv.Itoa(opts.ComponentQPS), "--kube-api-burst="+strconv.Itoa(2*opts.ComponentQPS))
	}
	err := cp.run(opts, binScheduler, filepath.Join(opts.BinDir, binScheduler),
		append(append(common, "--secure-port="+strconv.Itoa(schedulerPort)), workloadSchedulerArgs()...))
	if err != nil {
		return err
	}
	return cp.run(opts, binControllerManager, filepath.Join(opts.BinDir, binControllerManager), append(append(common,
		"--secure-port="+strconv.Itoa(kcmPort),
		// Without a service account signing key for it, the token
		// controller (Secret-based tokens) would fail; pods get their
		// tokens from TokenRequest through projected volumes instead.
		"--controllers=*,-serviceaccount-token",
		"--service-cluster-ip-range="+serviceClusterIPRange,
		"--use-service-account-credentials=false",
	), append(workloadControllerManagerArgs(), append(opts.Network.controllerManagerArgs(creds), nodeMonitorArgs(opts)...)...)...))
}

// nodeMonitorArgs are kube-controller-manager's node lifecycle flags of opts.
func nodeMonitorArgs(opts *Options) []string {
	if opts.NodeMonitorGracePeriod <= 0 {
		return nil
	}
	return []string{"--node-monitor-grace-period=" + opts.NodeMonitorGracePeriod.String()}
}

// waitControllersHealthy waits until kube-scheduler and
// kube-controller-manager answer /healthz to the admin.
func (cp *ControlPlane) waitControllersHealthy(ctx context.Context, ports ...int) error {
	cfg := rest.CopyConfig(cp.RESTConfig)
	cfg.Timeout = time.Second
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("creating a client for the controllers' health: %w", err)
	}
	for _, port := range ports {
		url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
		err := cp.waitFor(ctx, url, func(ctx context.Context) error {
			return Probe(ctx, httpClient, url)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Probe GETs url and fails unless it answers 200.
func Probe(ctx context.Context, c *http.Client, url string) error {
	_, err := Get(ctx, c, url)
	return err
}

// Get GETs url and returns the body of a 200 answer; any other status is
// an error.
func Get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// installCRDs creates the CRDs found in dirs and waits until they are
// established.
func (cp *ControlPlane) installCRDs(ctx context.Context, dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	deadline, ok := ctx.Deadline()
	maxTime := time.Minute
	if ok {
		maxTime = time.Until(deadline)
	}
	_, err := envtest.InstallCRDs(cp.RESTConfig, envtest.CRDInstallOptions{
		Paths:              dirs,
		ErrorIfPathMissing: true,
		MaxTime:            maxTime,
	})
	if err != nil {
		return fmt.Errorf("installing CRDs from %v: %w", dirs, err)
	}
	return nil
}

// waitFor polls check until it succeeds, a component exits or ctx ends.
func (cp *ControlPlane) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		if exitErr := cp.checkRunning(); exitErr != nil {
			return fmt.Errorf("waiting for %s: %w", what, exitErr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last check: %v)", what, ctx.Err(), err)
		case <-ticker.C:
		}
	}
}
