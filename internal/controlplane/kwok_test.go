package controlplane

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// TestCreateNodeRetriesCapacityOnConflict: when kwok updates the new node
// between its creation and the capacity write, the write conflicts; the
// capacity is written again on the re-read node, keeping kwok's conditions.
func TestCreateNodeRetriesCapacityOnConflict(t *testing.T) {
	clientset := fake.NewClientset()
	kwokReady := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	conflicts := 0
	clientset.PrependReactor("update", "nodes", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "status" || conflicts > 0 {
			return false, nil, nil
		}
		conflicts++
		// kwok got there first: its status write lands, ours conflicts.
		node, err := clientset.Tracker().Get(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "", "kwok-node-0")
		if err != nil {
			return true, nil, err
		}
		n := node.(*corev1.Node).DeepCopy()
		n.Status.Conditions = []corev1.NodeCondition{kwokReady}
		if err := clientset.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, n, ""); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "kwok-node-0", nil)
	})

	if err := createNode(t.Context(), clientset, "kwok-node-0", "10.128.16.0/20"); err != nil {
		t.Fatalf("createNode: %v", err)
	}
	if conflicts != 1 {
		t.Fatalf("the capacity write conflicted %d times, want 1", conflicts)
	}
	node, err := clientset.CoreV1().Nodes().Get(t.Context(), "kwok-node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Spec.PodCIDR != "10.128.16.0/20" || !slices.Equal(node.Spec.PodCIDRs, []string{"10.128.16.0/20"}) {
		t.Errorf("pod CIDR %q %v, want 10.128.16.0/20", node.Spec.PodCIDR, node.Spec.PodCIDRs)
	}
	if diff := cmp.Diff(nodeResources(), node.Status.Capacity); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(nodeResources(), node.Status.Allocatable); diff != "" {
		t.Errorf("allocatable (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.NodeCondition{kwokReady}, node.Status.Conditions); diff != "" {
		t.Errorf("kwok's conditions (-want +got):\n%s", diff)
	}
}

func TestNodePodCIDR(t *testing.T) {
	for _, tc := range []struct {
		cidr string
		i    int
		want string // empty: an error
	}{
		{"10.128.0.0/12", 0, "10.128.0.0/20"},
		{"10.128.0.0/12", 1, "10.128.16.0/20"},
		{"10.128.0.0/12", 44, "10.130.192.0/20"},
		{"10.128.0.0/12", 255, "10.143.240.0/20"},
		{"10.128.0.0/12", 256, ""},
		{"10.128.0.0/20", 0, "10.128.0.0/20"},
		{"10.128.0.0/20", 1, ""},
		{"10.128.0.0/21", 0, ""},
		{"10.128.0.1/12", 0, ""},
		{"fd00::/64", 0, ""},
		{"nonsense", 0, ""},
		{"10.128.0.0/12", -1, ""},
	} {
		got, err := NodePodCIDR(tc.cidr, tc.i)
		if tc.want == "" {
			if err == nil {
				t.Errorf("NodePodCIDR(%q, %d) = %q, want an error", tc.cidr, tc.i, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NodePodCIDR(%q, %d) = %q, %v; want %q", tc.cidr, tc.i, got, err, tc.want)
		}
	}
}

func TestKwokConfigurationKeepsKwokDefaultsButPodParallelism(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(kwokConfiguration(32), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "config.kwok.x-k8s.io/v1alpha1",
		"kind":       "KwokConfiguration",
		"options": map[string]any{
			"cidr":                            "10.0.0.0/24",
			"manageAllNodes":                  false,
			"enableDebuggingHandlers":         true,
			"enableContentionProfiling":       false,
			"enableProfilingHandler":          true,
			"podPlayStageParallelism":         float64(32),
			"nodePlayStageParallelism":        float64(4),
			"nodeLeaseParallelism":            float64(4),
			"podsOnNodeSyncParallelism":       float64(1),
			"enablePodsOnNodeSyncListPager":   true,
			"enablePodsOnNodeSyncStreamWatch": false,
		},
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("kwok configuration (-want +got):\n%s", diff)
	}
}
