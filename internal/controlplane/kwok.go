package controlplane

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Simulated nodes.
const (
	// KwokNodeAnnotation marks the nodes kwok manages.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	// KwokNodeAnnotationValue is the value of KwokNodeAnnotation.
	KwokNodeAnnotationValue = "fake"
	// NodeNamePrefix starts the name of every simulated node: kwok-node-0, ...
	NodeNamePrefix = "kwok-node-"
	// GPUResource is the extended resource simulated nodes offer.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
)

// kwokStageSets are the directories under kwok's kustomize/stage with the
// stages the local control plane needs: nodes become Ready and keep their
// heartbeat, pods become Ready, Job pods complete, deleted pods go away.
var kwokStageSets = []string{"node/fast", "node/heartbeat", "pod/fast"}

// startKwok starts kwok with the stages, registers the simulated nodes and
// waits until they are Ready and untainted.
func (cp *ControlPlane) startKwok(ctx context.Context, opts *Options) error {
	if opts.Nodes <= 0 {
		return nil
	}
	configs, err := stageFiles(ctx, opts.KwokStagesDir)
	if err != nil {
		return err
	}
	if opts.KwokPodParallelism > 0 {
		path := filepath.Join(opts.StateDir, "kwok-configuration.yaml")
		if err := os.WriteFile(path, kwokConfiguration(opts.KwokPodParallelism), 0o600); err != nil {
			return fmt.Errorf("writing kwok's configuration: %w", err)
		}
		configs = append([]string{path}, configs...)
	}
	args := []string{
		"--kubeconfig=" + opts.KubeconfigPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue,
		"--config=" + strings.Join(configs, ","),
	}
	if err := cp.run(opts, "kwok", opts.KwokBinary, args); err != nil {
		return err
	}
	clientset, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("creating client for nodes: %w", err)
	}
	for i := range opts.Nodes {
		podCIDR := ""
		if opts.KwokPodCIDR != "" {
			if podCIDR, err = NodePodCIDR(opts.KwokPodCIDR, i); err != nil {
				return err
			}
		}
		if err := createNode(ctx, clientset, NodeNamePrefix+fmt.Sprint(i), podCIDR); err != nil {
			return err
		}
	}
	return cp.waitFor(ctx, "simulated nodes to be Ready", func(ctx context.Context) error {
		return nodesReady(ctx, clientset, opts.Nodes)
	})
}

// kwokConfiguration is a KwokConfiguration document with kwok's defaults
// (v0.8.0) except podPlayStageParallelism. Every option is written out: kwok
// defaults only the configuration it makes when none is given, and refuses
// a given one whose node parallelism is left at 0.
func kwokConfiguration(podParallelism int) []byte {
	return fmt.Appendf(nil, `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  cidr: 10.0.0.0/24
  manageAllNodes: false
  enableDebuggingHandlers: true
  enableContentionProfiling: false
  enableProfilingHandler: true
  podPlayStageParallelism: %d
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
`, podParallelism)
}

// KwokNodePodCIDRBits is the prefix length of each simulated node's pod
// subnet with Options.KwokPodCIDR: 4,094 addresses, for at most
// KwokNodePods pods.
const KwokNodePodCIDRBits = 20

// NodePodCIDR is the i-th /KwokNodePodCIDRBits subnet of cidr, or an error
// if cidr is not an IPv4 prefix holding that many.
func NodePodCIDR(cidr string, i int) (string, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !prefix.Addr().Is4() || prefix.Bits() > KwokNodePodCIDRBits || prefix.Masked() != prefix {
		return "", fmt.Errorf("kwok pod CIDR %q: want an IPv4 network of /%d or wider", cidr, KwokNodePodCIDRBits)
	}
	if i < 0 || i >= 1<<(KwokNodePodCIDRBits-prefix.Bits()) {
		return "", fmt.Errorf("kwok pod CIDR %s has no /%d subnet for node %d", cidr, KwokNodePodCIDRBits, i)
	}
	base := binary.BigEndian.Uint32(prefix.Addr().AsSlice())
	var addr [4]byte
	binary.BigEndian.PutUint32(addr[:], base+uint32(i)<<(32-KwokNodePodCIDRBits)) //nolint:gosec // i is bounded above
	return netip.PrefixFrom(netip.AddrFrom4(addr), KwokNodePodCIDRBits).String(), nil
}

// createNode registers a simulated node with ample capacity, including
// GPUs, and podCIDR (if not empty) as its pod subnet.
func createNode(ctx context.Context, clientset kubernetes.Interface, name, podCIDR string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				KwokNodeAnnotation:             KwokNodeAnnotationValue,
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"kubernetes.io/role":     "agent",
				"type":                   "kwok",
			},
		},
		Spec: nodeSpec(podCIDR),
		Status: corev1.NodeStatus{
			Capacity:    nodeResources(),
			Allocatable: nodeResources(),
			NodeInfo:    corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: "v1.36.3-kwok"},
		},
	}
	created, err := clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	if err := setNodeCapacity(ctx, clientset, created, node.Status); err != nil {
		return fmt.Errorf("setting capacity of node %s: %w", name, err)
	}
	return nil
}

// nodeSpec sets a simulated node's pod subnet, if any.
func nodeSpec(podCIDR string) corev1.NodeSpec {
	if podCIDR == "" {
		return corev1.NodeSpec{}
	}
	return corev1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}}
}

// setNodeCapacity writes the capacity, allocatable and node info of want
// into the status of a node just created: the API server drops status on
// create. kwok starts updating the node's status (its conditions) as soon as
// it sees it, so under load the first write can conflict; each retry
// re-reads the node and sets only these fields, keeping kwok's conditions.
func setNodeCapacity(ctx context.Context, clientset kubernetes.Interface, created *corev1.Node, want corev1.NodeStatus) error {
	node := created
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node == nil {
			var err error
			if node, err = clientset.CoreV1().Nodes().Get(ctx, created.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		node.Status.Capacity = want.Capacity
		node.Status.Allocatable = want.Allocatable
		node.Status.NodeInfo = want.NodeInfo
		_, err := clientset.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		node = nil // a conflict means a newer node: read it again
		return err
	})
}

// KwokNodePods is how many Pods one simulated node holds.
const KwokNodePods = 1000

// nodeResources is the capacity of one simulated node.
func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("256"),
		corev1.ResourceMemory:           resource.MustParse("1Ti"),
		corev1.ResourcePods:             *resource.NewQuantity(KwokNodePods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Ti"),
		GPUResource:                     resource.MustParse("8"),
	}
}

// nodesReady fails unless want simulated nodes are Ready and untainted.
func nodesReady(ctx context.Context, clientset kubernetes.Interface, want int) error {
	nodes, err := clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ready := 0
	for i := range nodes.Items {
		if isReadyUntainted(&nodes.Items[i]) {
			ready++
		}
	}
	if ready < want {
		return fmt.Errorf("%d of %d nodes Ready and untainted", ready, want)
	}
	return nil
}

// isReadyUntainted reports whether the node can take pods.
func isReadyUntainted(node *corev1.Node) bool {
	if len(node.Spec.Taints) > 0 || node.Spec.Unschedulable {
		return false
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stageFiles lists the kwok Stage manifests: the *.yaml files of dir, or of
// the stage sets in kwok's module when dir is empty.
func stageFiles(ctx context.Context, dir string) ([]string, error) {
	if dir == "" {
		dir = os.Getenv(EnvKwokStages)
	}
	if dir != "" {
		return yamlFiles(dir)
	}
	module, err := kwokModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, set := range kwokStageSets {
		found, err := yamlFiles(filepath.Join(module, "kustomize", "stage", filepath.FromSlash(set)))
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	return files, nil
}

// yamlFiles returns the *.yaml files in dir except kustomization.yaml.
func yamlFiles(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("listing kwok stages in %s: %w", dir, err)
	}
	var files []string
	for _, m := range matches {
		if filepath.Base(m) != "kustomization.yaml" {
			files = append(files, m)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no kwok stage manifests (*.yaml) in %s", dir)
	}
	return files, nil
}

// kwokModuleDir returns the directory of kwok's module at KwokVersion in the
// Go module cache, downloading it if needed (`go install` of kwok already
// put it there).
func kwokModuleDir(ctx context.Context) (string, error) {
	// Run in an empty directory, outside any module or workspace, so that no
	// go.mod is read or changed.
	dir, err := os.MkdirTemp("", "kwok-stages-")
	if err != nil {
		return "", fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kwok@"+KwokVersion)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating kwok's module for its stages (or set %s): %w", EnvKwokStages, WithStderr(err))
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("reading `go mod download` output: %w", err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("downloading kwok's module: %s", info.Error)
	}
	return info.Dir, nil
}

// WithStderr adds a failed command's standard error to its error.
func WithStderr(err error) error {
	if exitErr, ok := err.(*exec.ExitError); ok && len(exitErr.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exitErr.Stderr)))
	}
	return err
}

// NodeResources is the capacity (and allocatable) of every simulated node.
func NodeResources() corev1.ResourceList { return nodeResources() }

// AddNode registers one more simulated node, name, with NodeResources, and
// returns once it is Ready and untainted: capacity added while pods wait.
// The control plane must have been started with Nodes > 0 (kwok running).
func (cp *ControlPlane) AddNode(ctx context.Context, name string) error {
	clientset, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("creating client for nodes: %w", err)
	}
	if err := createNode(ctx, clientset, name, ""); err != nil {
		return err
	}
	return cp.waitFor(ctx, "node "+name+" to be Ready", func(ctx context.Context) error {
		node, err := clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !isReadyUntainted(node) {
			return fmt.Errorf("node %s is not Ready and untainted", name)
		}
		return nil
	})
}
