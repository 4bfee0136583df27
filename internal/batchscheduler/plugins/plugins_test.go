package plugins_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/plugins"
)

// TestEveryAcceptedNameHasAPlugin: the configuration accepts exactly the
// names there is a plugin for, so a name it accepts never fails later.
func TestEveryAcceptedNameHasAPlugin(t *testing.T) {
	want := slices.Sorted(slices.Values(configv1alpha1.SupportedBatchSchedulers))
	if diff := cmp.Diff(want, plugins.Names()); diff != "" {
		t.Errorf("plugins vs configv1alpha1.SupportedBatchSchedulers (-want +got):\n%s", diff)
	}
	for _, name := range plugins.Names() {
		f, err := plugins.Factory(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.New(t.Context(), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := s.(batchscheduler.MetadataAdder); !ok {
			t.Errorf("%s does not decorate Pods", name)
		}
	}
	if f, err := plugins.Factory("kubernetes-was-v1alpha2"); err != nil || f != (kuberneteswas.Factory{}) {
		t.Errorf("Factory(kubernetes-was-v1alpha2) = %v, %v", f, err)
	}
	if slices.Contains(plugins.Names(), "kubernetes-was-v1alpha2") {
		t.Error("the KubernetesWAS plugin is offered to --batch-scheduler")
	}
	if _, err := plugins.Factory("slurm"); err == nil {
		t.Error("an unknown name has a plugin")
	}
}

func TestSelected(t *testing.T) {
	for _, c := range []struct {
		cfg           configv1alpha1.Configuration
		kubernetesWAS bool
		want          string
	}{
		{configv1alpha1.Configuration{}, false, ""},
		{configv1alpha1.Configuration{BatchScheduler: "yunikorn"}, false, "yunikorn"},
		{configv1alpha1.Configuration{EnableBatchScheduler: true}, false, "volcano"},
		{configv1alpha1.Configuration{}, true, "kubernetes-was-v1alpha2"},
	} {
		if got := plugins.Selected(c.cfg, c.kubernetesWAS); got != c.want {
			t.Errorf("Selected(%+v) = %q, want %q", c.cfg, got, c.want)
		}
	}
}
