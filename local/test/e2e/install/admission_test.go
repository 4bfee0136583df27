package install_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// admissionInterval paces the admission probe.
const admissionInterval = 200 * time.Millisecond

// admissionProbe creates a valid RayCluster over and over with a
// server-side dry run, which goes through the validating webhooks
// (sideEffects None) and stores nothing: what a user's `kubectl apply`
// of a Ray object meets while the operator is replaced. With
// failurePolicy Fail, a webhook nobody serves refuses it.
type admissionProbe struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	total    int
	failures []string
}

func startAdmissionProbe(c client.Client, ns string) *admissionProbe {
	p := &admissionProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run(c, ns)
	return p
}

func (p *admissionProbe) run(c client.Client, ns string) {
	defer close(p.done)
	ticker := time.NewTicker(admissionInterval)
	defer ticker.Stop()
	for {
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Create(ctx, validRayCluster(ns), client.DryRunAll)
		cancel()
		p.mu.Lock()
		p.total++
		if err != nil {
			p.failures = append(p.failures, fmt.Sprintf("%s: %v", began.Format("15:04:05.000"), err))
		}
		p.mu.Unlock()
		select {
		case <-p.stop:
			return
		case <-ticker.C:
		}
	}
}

// finish stops the probe and returns how many creates it tried and the
// refusals.
func (p *admissionProbe) finish() (int, []string) {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, p.failures
}

// validRayCluster is a RayCluster every check admits.
func validRayCluster(ns string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "admission-probe", Namespace: ns},
		Spec: rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: map[string]string{},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "ray-head", Image: "rayproject/ray:2.60.0",
			}}}},
		}},
	}
}
