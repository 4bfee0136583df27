package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/rayingress"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rayrbac"
	"github.com/ray-operator/ray-operator/internal/rayservices"
	"github.com/ray-operator/ray-operator/internal/rediscleanup"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// gates: every target validates with the feature gates off, as a default
// install runs.
var gates = validation.NoFeatureGates{}

func FuzzRayCluster(f *testing.F) {
	fuzzAccepted(f, rayv1.KindRayCluster, validateCluster, checkClusterBuilds)
}

// validateCluster runs the RayCluster controller's validation layers.
func validateCluster(rc *rayv1.RayCluster) error {
	return errors.Join(validation.RayClusterMetadata(rc.ObjectMeta),
		validation.RayClusterSpec(&rc.Spec, rc.Annotations, gates),
		validation.RayClusterUpgradeOptions(rc))
}

// checkClusterBuilds builds every child of an accepted cluster twice: each
// build must succeed, give the same objects, and give valid Pods from
// valid templates.
func checkClusterBuilds(t *testing.T, rc *rayv1.RayCluster) {
	t.Helper()
	first, second := buildCluster(t, rc), buildCluster(t, rc)
	if !equality.Semantic.DeepEqual(first, second) {
		t.Fatalf("building %s twice gave different objects", rc.Name)
	}
	checkPods(t, rc, first)
}

func buildCluster(t *testing.T, rc *rayv1.RayCluster) []client.Object {
	t.Helper()
	in := rc.DeepCopy()
	opts := raypod.Options{}
	head, err := raypod.BuildHeadPod(in, opts)
	if err != nil {
		t.Fatalf("an accepted cluster does not build its head Pod: %v", err)
	}
	objs := []client.Object{head, rayservices.BuildHeadService(in, rayservices.HeadServiceOptions{})}
	for i := range in.Spec.WorkerGroupSpecs {
		pod, err := raypod.BuildWorkerPod(in, i, raypod.WorkerIndex{ReplicaName: in.Spec.WorkerGroupSpecs[i].GroupName + "-x"}, opts)
		if err != nil {
			t.Fatalf("an accepted cluster does not build worker group %d: %v", i, err)
		}
		objs = append(objs, pod)
	}
	if rayservices.NeedsHeadlessService(in) {
		objs = append(objs, rayservices.BuildHeadlessService(in))
	}
	if svc, err := rayservices.BuildServeService(in); err == nil {
		objs = append(objs, svc)
	} else if !errors.Is(err, rayservices.ErrNoServePort) {
		t.Fatalf("serve Service: %v", err)
	}
	objs = append(objs, rayingress.BuildIngress(in), rayingress.BuildRoute(in),
		rayrbac.BuildServiceAccount(in), rayrbac.BuildRole(in), rayrbac.BuildRoleBinding(in))
	secret, err := rayrbac.BuildAuthSecret(in, bytes.NewReader(make([]byte, 64)))
	if err != nil {
		t.Fatalf("auth Secret: %v", err)
	}
	objs = append(objs, secret)
	if job, err := rediscleanup.BuildJob(in, opts); err == nil {
		objs = append(objs, job)
	} else {
		t.Fatalf("an accepted cluster does not build its Redis cleanup Job: %v", err)
	}
	if !equality.Semantic.DeepEqual(in, rc) {
		t.Fatal("a builder changed the cluster it was given")
	}
	return objs
}

// fuzzAccepted fuzzes the JSON of objects of kind, seeded with the
// samples of that kind: what decodes as a T and passes validate must pass
// check, and a rejection must name a field.
func fuzzAccepted[T any](f *testing.F, kind string, validate func(*T) error, check func(*testing.T, *T)) {
	f.Helper()
	addSamples(f, kind)
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := new(T)
		if json.Unmarshal(data, obj) != nil {
			return
		}
		if err := validate(obj); err != nil {
			requireNamesField(t, err)
			return
		}
		check(t, obj)
	})
}

// requireNamesField fails when a rejection does not name a field.
func requireNamesField(t *testing.T, err error) {
	t.Helper()
	if !namesAField(err.Error()) {
		t.Fatalf("the rejection %q names no field of the API", err)
	}
}
