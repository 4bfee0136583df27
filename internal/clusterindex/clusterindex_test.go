package clusterindex

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func pod(ns, name, cluster string, node rayv1.RayNodeType) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}}}
	if cluster != "" {
		p.Labels[rayv1.LabelCluster] = cluster
	}
	if node != "" {
		p.Labels[rayv1.LabelNodeType] = string(node)
	}
	return p
}

// TestHeadPods: the head Pods of the cluster, a terminating one included,
// and none of another cluster (one whose name starts with this one's), of
// another namespace, a worker or a Pod without the cluster label.
func TestHeadPods(t *testing.T) {
	terminating := pod("ns", "rc-head-old", "rc", rayv1.HeadNode)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	terminating.Finalizers = []string{"test/keep"}
	objs := []client.Object{
		pod("ns", "rc-head", "rc", rayv1.HeadNode),
		terminating,
		pod("ns", "rc-worker", "rc", rayv1.WorkerNode),
		pod("ns", "rc2-head", "rc2", rayv1.HeadNode),
		pod("ns", "loose-head", "", rayv1.HeadNode),
		pod("other", "rc-head", "rc", rayv1.HeadNode),
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, Pods, ClusterOf).Build()
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}}

	pods, err := HeadPods(context.Background(), c, cluster)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"ns/rc-head", "ns/rc-head-old"}, got); diff != "" {
		t.Errorf("HeadPods (-want +got):\n%s", diff)
	}
}

// TestHeadPodsNeedsTheIndex: a reader without the index is an error naming
// the cluster, not an empty answer.
func TestHeadPodsNeedsTheIndex(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(pod("ns", "rc-head", "rc", rayv1.HeadNode)).Build()
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rc"}}
	if pods, err := HeadPods(context.Background(), c, cluster); err == nil {
		t.Fatalf("HeadPods without the index = %d Pods, nil error; want an error", len(pods))
	}
}

// TestClusterOf: the label's value, nothing for an object without it.
func TestClusterOf(t *testing.T) {
	if diff := cmp.Diff([]string{"rc"}, ClusterOf(pod("ns", "p", "rc", ""))); diff != "" {
		t.Error(diff)
	}
	if got := ClusterOf(pod("ns", "p", "", "")); got != nil {
		t.Errorf("ClusterOf without the label = %v, want nil", got)
	}
}
