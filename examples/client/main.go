// Command client shows the typed Go client of ray.io/v1 (pkg/client): it
// submits a RayJob with server-side apply, follows it through a shared
// informer and its lister until the job finishes, and exits 0 when it
// succeeded. docs/client.md walks through it; test/integration/client runs it.
//
//	go run ./examples/client --namespace default --name hello
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	rayv1ac "github.com/ray-operator/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"github.com/ray-operator/ray-operator/pkg/client/clientset/versioned"
	"github.com/ray-operator/ray-operator/pkg/client/informers/externalversions"
)

// fieldManager names this program in the RayJob's managed fields.
const fieldManager = "ray-client-example"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	namespace := flag.String("namespace", "default", "namespace of the RayJob")
	name := flag.String("name", "hello", "name of the RayJob")
	timeout := flag.Duration("timeout", 15*time.Minute, "how long to wait for the job to finish")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, *kubeconfig, *namespace, *name); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, namespace, name string) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return err
	}
	clientset, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}

	// Server-side apply: the API server merges the fields this program sets
	// and records it as their manager; running the program again changes
	// nothing, and fields it stops setting are removed.
	job, err := clientset.RayV1().RayJobs(namespace).Apply(ctx, rayJob(name, namespace),
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying RayJob: %w", err)
	}
	fmt.Printf("applied RayJob %s/%s (generation %d)\n", job.Namespace, job.Name, job.Generation)

	final, err := waitFinished(ctx, clientset, namespace, name)
	if err != nil {
		return err
	}
	fmt.Printf("RayJob %s: %s (%s)\n", name, final.Status.JobStatus, final.Status.JobDeploymentStatus)
	if final.Status.JobStatus != rayv1.JobStatusSucceeded {
		return errors.New("the job did not succeed: " + final.Status.Message)
	}
	return nil
}

// rayJob is the RayJob this program applies: a one-line Ray program on a
// cluster with a head node only, deleted once the job finishes.
func rayJob(name, namespace string) *rayv1ac.RayJobApplyConfiguration {
	head := corev1ac.Container().
		WithName("ray-head").
		WithImage("rayproject/ray:2.52.0").
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}))
	return rayv1ac.RayJob(name, namespace).
		WithLabels(map[string]string{"app.kubernetes.io/created-by": fieldManager}).
		WithSpec(rayv1ac.RayJobSpec().
			WithEntrypoint(`python -c "import ray; ray.init(); print(ray.cluster_resources())"`).
			WithShutdownAfterJobFinishes(true).
			WithRayClusterSpec(rayv1ac.RayClusterSpec().
				WithRayVersion("2.52.0").
				WithHeadGroupSpec(rayv1ac.HeadGroupSpec().
					WithRayStartParams(map[string]string{}).
					WithTemplate(corev1ac.PodTemplateSpec().
						WithSpec(corev1ac.PodSpec().WithContainers(head))))))
}

// waitFinished follows the RayJob with a shared informer restricted to it,
// and returns it from the informer's lister once its deployment status is
// final.
func waitFinished(ctx context.Context, clientset versioned.Interface, namespace, name string) (*rayv1.RayJob, error) {
	factory := externalversions.NewSharedInformerFactoryWithOptions(clientset, 0,
		externalversions.WithNamespace(namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	jobs := factory.Ray().V1().RayJobs()
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	if _, err := jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
	}); err != nil {
		return nil, err
	}
	// Shutdown waits for the informers, which stop when their context ends.
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())

	for {
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for RayJob %s to finish: %w", name, ctx.Err())
		}
		job, err := jobs.Lister().RayJobs(namespace).Get(name)
		if err != nil {
			return nil, err
		}
		// ValidationFailed is final too: the operator waits for the RayJob
		// to be deleted and created again.
		if status := job.Status.JobDeploymentStatus; rayv1.IsJobDeploymentTerminal(status) || status == rayv1.JobDeploymentStatusValidationFailed {
			return job, nil
		}
	}
}
