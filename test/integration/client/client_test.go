package client

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
	rayv1ac "github.com/ray-operator/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"github.com/ray-operator/ray-operator/pkg/client/clientset/versioned"
	"github.com/ray-operator/ray-operator/pkg/client/informers/externalversions"
)

const (
	// fieldManager is the manager the test applies as.
	fieldManager = "client-test"
	// key is the label, and the key of the map entry in the spec, the test
	// applies; applied is their value.
	key, applied = "client-test", "applied"
	// waitTimeout bounds every wait for an informer event.
	waitTimeout = 30 * time.Second
)

// object is what the generated clients hand out: a pointer to a ray.io/v1
// kind.
type object interface {
	metav1.Object
	runtime.Object
}

// typedClient is the part of a generated namespaced client (RayClusters(ns),
// ...) the test uses; C is the kind's apply configuration.
type typedClient[T object, C any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Apply(ctx context.Context, obj C, opts metav1.ApplyOptions) (T, error)
	ApplyStatus(ctx context.Context, obj C, opts metav1.ApplyOptions) (T, error)
}

// namespaceLister is the part of a generated namespace lister the test uses.
type namespaceLister[T object] interface {
	Get(name string) (T, error)
}

// kind is one ray.io/v1 kind as the test drives it: which generated client,
// informer and lister serve it, and which spec and status field it applies.
type kind[T object, C labeled[C]] struct {
	// object is a valid object of the kind, without the applied fields.
	object func(name, ns string) T
	client func(cs versioned.Interface, ns string) typedClient[T, C]
	// informer registers the kind's informer with f (before f starts).
	informer func(f externalversions.SharedInformerFactory) cache.SharedIndexInformer
	lister   func(f externalversions.SharedInformerFactory, ns string) namespaceLister[T]
	// apply is the kind's bare apply configuration (name and namespace).
	apply func(name, ns string) C
	// extract is the kind's Extract<Kind>: the configuration a manager
	// applied, read back from the object's managed fields.
	extract func(obj T, manager string) (C, error)
	// withSpec adds the spec map entry key=value to an apply configuration.
	withSpec func(c C, key, value string) C
	// spec reads that entry back ("" when absent).
	spec func(obj T, key string) string
	// withStatus sets a status field to a value derived from n; status reads
	// it back as text.
	withStatus func(c C, n int32) C
	status     func(obj T) string
	// wantStatus is what status reads after withStatus(..., n).
	wantStatus func(n int32) string
}

// TestTypedClient creates each kind with the clientset, sees it through a
// shared informer and its lister, server-side applies a label and a spec
// map entry, extracts them again (applying the extract changes nothing),
// takes them away by applying without them, and applies a status field
// through the status subresource.
func TestTypedClient(t *testing.T) {
	env := testenv.Shared(t)
	cs, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(t *testing.T){
		"RayCluster": rayClusterKind().run(env, cs),
		"RayJob":     rayJobKind().run(env, cs),
		"RayService": rayServiceKind().run(env, cs),
		"RayCronJob": rayCronJobKind().run(env, cs),
	}
	for name, run := range cases {
		t.Run(name, run)
	}
}

func rayClusterKind() kind[*rayv1.RayCluster, *rayv1ac.RayClusterApplyConfiguration] {
	return kind[*rayv1.RayCluster, *rayv1ac.RayClusterApplyConfiguration]{
		object: func(name, ns string) *rayv1.RayCluster { return wrappers.MakeRayCluster(name, ns).Obj() },
		client: func(cs versioned.Interface, ns string) typedClient[*rayv1.RayCluster, *rayv1ac.RayClusterApplyConfiguration] {
			return cs.RayV1().RayClusters(ns)
		},
		informer: func(f externalversions.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Ray().V1().RayClusters().Informer()
		},
		lister: func(f externalversions.SharedInformerFactory, ns string) namespaceLister[*rayv1.RayCluster] {
			return f.Ray().V1().RayClusters().Lister().RayClusters(ns)
		},
		apply:   rayv1ac.RayCluster,
		extract: rayv1ac.ExtractRayCluster,
		withSpec: func(c *rayv1ac.RayClusterApplyConfiguration, k, v string) *rayv1ac.RayClusterApplyConfiguration {
			return c.WithSpec(rayv1ac.RayClusterSpec().WithHeadServiceAnnotations(map[string]string{k: v}))
		},
		spec: func(o *rayv1.RayCluster, k string) string { return o.Spec.HeadServiceAnnotations[k] },
		withStatus: func(c *rayv1ac.RayClusterApplyConfiguration, n int32) *rayv1ac.RayClusterApplyConfiguration {
			return c.WithStatus(rayv1ac.RayClusterStatus().WithDesiredWorkerReplicas(n))
		},
		status:     func(o *rayv1.RayCluster) string { return strconv.Itoa(int(o.Status.DesiredWorkerReplicas)) },
		wantStatus: func(n int32) string { return strconv.Itoa(int(n)) },
	}
}

func rayJobKind() kind[*rayv1.RayJob, *rayv1ac.RayJobApplyConfiguration] {
	return kind[*rayv1.RayJob, *rayv1ac.RayJobApplyConfiguration]{
		object: func(name, ns string) *rayv1.RayJob { return wrappers.MakeRayJob(name, ns).Obj() },
		client: func(cs versioned.Interface, ns string) typedClient[*rayv1.RayJob, *rayv1ac.RayJobApplyConfiguration] {
			return cs.RayV1().RayJobs(ns)
		},
		informer: func(f externalversions.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Ray().V1().RayJobs().Informer()
		},
		lister: func(f externalversions.SharedInformerFactory, ns string) namespaceLister[*rayv1.RayJob] {
			return f.Ray().V1().RayJobs().Lister().RayJobs(ns)
		},
		apply:   rayv1ac.RayJob,
		extract: rayv1ac.ExtractRayJob,
		withSpec: func(c *rayv1ac.RayJobApplyConfiguration, k, v string) *rayv1ac.RayJobApplyConfiguration {
			return c.WithSpec(rayv1ac.RayJobSpec().WithMetadata(map[string]string{k: v}))
		},
		spec: func(o *rayv1.RayJob, k string) string { return o.Spec.Metadata[k] },
		withStatus: func(c *rayv1ac.RayJobApplyConfiguration, n int32) *rayv1ac.RayJobApplyConfiguration {
			return c.WithStatus(rayv1ac.RayJobStatus().WithSucceeded(n))
		},
		status: func(o *rayv1.RayJob) string {
			if o.Status.Succeeded == nil {
				return ""
			}
			return strconv.Itoa(int(*o.Status.Succeeded))
		},
		wantStatus: func(n int32) string { return strconv.Itoa(int(n)) },
	}
}

func rayServiceKind() kind[*rayv1.RayService, *rayv1ac.RayServiceApplyConfiguration] {
	return kind[*rayv1.RayService, *rayv1ac.RayServiceApplyConfiguration]{
		object: func(name, ns string) *rayv1.RayService { return wrappers.MakeRayService(name, ns).Obj() },
		client: func(cs versioned.Interface, ns string) typedClient[*rayv1.RayService, *rayv1ac.RayServiceApplyConfiguration] {
			return cs.RayV1().RayServices(ns)
		},
		informer: func(f externalversions.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Ray().V1().RayServices().Informer()
		},
		lister: func(f externalversions.SharedInformerFactory, ns string) namespaceLister[*rayv1.RayService] {
			return f.Ray().V1().RayServices().Lister().RayServices(ns)
		},
		apply:   rayv1ac.RayService,
		extract: rayv1ac.ExtractRayService,
		// A field of the embedded cluster spec: applying a part of a nested
		// struct leaves its other fields (set at creation) alone.
		withSpec: func(c *rayv1ac.RayServiceApplyConfiguration, k, v string) *rayv1ac.RayServiceApplyConfiguration {
			return c.WithSpec(rayv1ac.RayServiceSpec().WithRayClusterSpec(
				rayv1ac.RayClusterSpec().WithHeadServiceAnnotations(map[string]string{k: v})))
		},
		spec: func(o *rayv1.RayService, k string) string { return o.Spec.RayClusterSpec.HeadServiceAnnotations[k] },
		withStatus: func(c *rayv1ac.RayServiceApplyConfiguration, n int32) *rayv1ac.RayServiceApplyConfiguration {
			return c.WithStatus(rayv1ac.RayServiceStatuses().WithNumServeEndpoints(n))
		},
		status:     func(o *rayv1.RayService) string { return strconv.Itoa(int(o.Status.NumServeEndpoints)) },
		wantStatus: func(n int32) string { return strconv.Itoa(int(n)) },
	}
}

func rayCronJobKind() kind[*rayv1.RayCronJob, *rayv1ac.RayCronJobApplyConfiguration] {
	return kind[*rayv1.RayCronJob, *rayv1ac.RayCronJobApplyConfiguration]{
		object: func(name, ns string) *rayv1.RayCronJob { return wrappers.MakeRayCronJob(name, ns).Obj() },
		client: func(cs versioned.Interface, ns string) typedClient[*rayv1.RayCronJob, *rayv1ac.RayCronJobApplyConfiguration] {
			return cs.RayV1().RayCronJobs(ns)
		},
		informer: func(f externalversions.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Ray().V1().RayCronJobs().Informer()
		},
		lister: func(f externalversions.SharedInformerFactory, ns string) namespaceLister[*rayv1.RayCronJob] {
			return f.Ray().V1().RayCronJobs().Lister().RayCronJobs(ns)
		},
		apply:   rayv1ac.RayCronJob,
		extract: rayv1ac.ExtractRayCronJob,
		withSpec: func(c *rayv1ac.RayCronJobApplyConfiguration, k, v string) *rayv1ac.RayCronJobApplyConfiguration {
			return c.WithSpec(rayv1ac.RayCronJobSpec().WithJobTemplate(rayv1ac.RayJobSpec().WithMetadata(map[string]string{k: v})))
		},
		spec: func(o *rayv1.RayCronJob, k string) string { return o.Spec.JobTemplate.Metadata[k] },
		withStatus: func(c *rayv1ac.RayCronJobApplyConfiguration, n int32) *rayv1ac.RayCronJobApplyConfiguration {
			return c.WithStatus(rayv1ac.RayCronJobStatus().WithLastScheduleTime(scheduleTime(n)))
		},
		status: func(o *rayv1.RayCronJob) string {
			if o.Status.LastScheduleTime == nil {
				return ""
			}
			return o.Status.LastScheduleTime.UTC().Format(time.RFC3339)
		},
		wantStatus: func(n int32) string { return scheduleTime(n).UTC().Format(time.RFC3339) },
	}
}

// scheduleTime is a fixed time n minutes into 2026.
func scheduleTime(n int32) metav1.Time {
	return metav1.NewTime(time.Date(2026, time.January, 1, 0, int(n), 0, 0, time.UTC))
}
