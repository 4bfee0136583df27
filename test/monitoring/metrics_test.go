package monitoring_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/test/monitoring"
)

func TestMain(m *testing.M) {
	root, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	crds, err := filepath.Abs(filepath.Join("testdata", "crds"))
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.WithCRDDirs(filepath.Join(root, "config", "crd", "bases"), crds)))
}

// TestQueriesMatchTheOperatorsMetrics runs the operator binary with
// --enable-metrics against a real API server, lets it reconcile a
// RayCluster that gets provisioned, one that does not, a RayJob that fails
// (its deadline passes) and a RayService that is not ready, then scrapes its
// /metrics endpoint: every metric, label and matched value the dashboard's
// panels and variables and the PrometheusRule's alerts query must be there,
// and the alerts, evaluated by Prometheus' rule engine over that scrape, fire
// for the objects they are about.
func TestQueriesMatchTheOperatorsMetrics(t *testing.T) {
	env := testenv.Shared(t)
	w := testenv.NewWorld(t, env)
	w.Timeout = testenv.DefaultTimeout * 2
	url := runOperator(t, env)
	reconcileObjects(w)

	queries, vars := dashboardQueries(t)
	rules, err := monitoring.LoadRules(ruleGroups(t, kustomizePrometheusRule(t)))
	if err != nil {
		t.Fatal(err)
	}
	queries = append(queries, rules...)
	t.Logf("%d dashboard and rule queries, %d variables", len(queries), len(vars))

	var scrape monitoring.Scrape
	var body []byte
	w.Eventually("every query to match the scrape", func() (bool, error) {
		var code int
		var err error
		code, body, err = get(t.Context(), url)
		if err != nil || code != http.StatusOK {
			return false, fmt.Errorf("GET %s: %d %v", url, code, err)
		}
		if scrape, err = monitoring.ParseScrape(bytes.NewReader(body)); err != nil {
			return false, err
		}
		var errs []error
		for _, q := range queries {
			errs = append(errs, scrape.Check(q)...)
		}
		for _, v := range vars {
			errs = append(errs, scrape.CheckLabelValues(v)...)
		}
		return len(errs) == 0, errors.Join(errs...)
	})
	t.Logf("the scrape has %d series names", len(scrape))
	checkAlertsFire(t, w.NS, body)
}

// reconcileObjects creates Ray objects in w's namespace and waits for the
// operator to bring them where the queries look: a provisioned and a
// pending RayCluster, a failed RayJob whose cluster is deleted, a RayService
// that is not ready.
func reconcileObjects(w *testenv.World) {
	w.T.Helper()
	provisioned := installcheck.Sample(w.T, "ray-cluster.minimal.yaml")
	provisioned.Name, provisioned.Namespace = "provisioned", w.NS
	w.Create(provisioned)
	pending := installcheck.Sample(w.T, "ray-cluster.minimal.yaml")
	pending.Name, pending.Namespace = "pending", w.NS
	w.Create(pending)

	job := sample[rayv1.RayJob](w.T, "ray-job.k8s-job-mode.yaml")
	job.Name, job.Namespace = "deadline", w.NS
	job.Spec.ActiveDeadlineSeconds = ptr.To[int32](2)
	job.Spec.ShutdownAfterJobFinishes = true
	w.Create(job)

	service := sample[rayv1.RayService](w.T, "ray-service.new-cluster.yaml")
	service.Name, service.Namespace = "unready", w.NS
	w.Create(service)

	w.RunPods("provisioned", 2)
	w.Eventually("RayCluster provisioned to be provisioned", func() (bool, error) {
		rc := w.RayCluster("provisioned")
		return rc != nil && meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned)), nil
	})
	w.WaitRayJob("deadline", rayv1.JobDeploymentStatusFailed)
	w.Eventually("the RayService to get a RayCluster", func() (bool, error) {
		rs := &rayv1.RayService{}
		return w.Get("unready", rs) && rs.Status.PendingServiceStatus.RayClusterName != "", nil
	})
}

// sample reads config/samples/<name> into a T.
func sample[T any](t *testing.T, name string) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(installcheck.ModuleRoot(t), "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	obj := new(T)
	if err := yaml.Unmarshal(data, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return obj
}

// dashboardQueries reads the dashboard of config/components/monitoring.
func dashboardQueries(t *testing.T) ([]monitoring.Query, []monitoring.LabelValues) {
	t.Helper()
	data, err := os.ReadFile(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	queries, vars, err := monitoring.DashboardQueries(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	return queries, vars
}

func dashboardPath(t *testing.T) string {
	return filepath.Join(installcheck.ModuleRoot(t), "config", "components", "monitoring", "ray-operator-dashboard.json")
}
