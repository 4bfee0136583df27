package monitoring_test

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"

	"github.com/ray-operator/ray-operator/test/monitoring"
)

// evaluation is how long and how often the alerts are evaluated over the
// scraped values held constant: past the longest `for` (15m).
const (
	evalStep  = time.Minute
	evalSteps = 25
)

// checkAlertsFire evaluates the PrometheusRule's alerts with Prometheus'
// rule engine over the samples of a real scrape (body) held for
// evalSteps minutes, plus one copy of the rayjob controller's reconcile
// errors counter that grows every minute, and checks which objects each alert
// fires for: the failed RayJob, the RayService that is not ready (only once
// its 10 minutes passed), the RayClusters never provisioned (not the
// provisioned one), and the controller whose errors grow.
func checkAlertsFire(t *testing.T, ns string, body []byte) {
	t.Helper()
	storage := promqltest.LoadedStorage(t, loadCommand(t, body))
	engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 1_000_000)
	query := rules.EngineQueryFunc(engine, storage)

	queries, err := monitoring.LoadRules(ruleGroups(t, kustomizePrometheusRule(t)))
	if err != nil {
		t.Fatal(err)
	}
	spec := kustomizePrometheusRule(t).Spec.Groups[0].Rules
	firing := map[string][]string{}
	firingAt9m := map[string][]string{}
	for i, q := range queries {
		expr, err := monitoring.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		hold := time.Duration(0)
		if f := spec[i].For; f != nil {
			d, err := model.ParseDuration(string(*f))
			if err != nil {
				t.Fatal(err)
			}
			hold = time.Duration(d)
		}
		rule := rules.NewAlertingRule(spec[i].Alert, expr, hold, 0, labels.FromMap(spec[i].Labels),
			labels.EmptyLabels(), labels.EmptyLabels(), "", false, promslog.NewNopLogger())
		for step := range evalSteps {
			if _, err := rule.Eval(t.Context(), 0, time.Unix(0, 0).Add(time.Duration(step)*evalStep), query, nil, 0); err != nil {
				t.Fatalf("%s: %v", spec[i].Alert, err)
			}
			if step == 9 {
				firingAt9m[spec[i].Alert] = firingFor(rule, ns)
			}
		}
		firing[spec[i].Alert] = firingFor(rule, ns)
	}
	t.Logf("firing after %v: %v", evalSteps*evalStep, firing)

	if got := firing["RayJobFailed"]; !slices.Equal(got, []string{"deadline"}) {
		t.Errorf("RayJobFailed fires for %v, want [deadline]", got)
	}
	if got := firing["RayServiceNotReady"]; !slices.Equal(got, []string{"unready"}) {
		t.Errorf("RayServiceNotReady fires for %v, want [unready]", got)
	}
	if got := firingAt9m["RayServiceNotReady"]; len(got) != 0 {
		t.Errorf("RayServiceNotReady fires after 9m for %v, want nothing before its 10m", got)
	}
	if got := firing["RayClusterProvisioningStuck"]; !slices.Contains(got, "pending") || slices.Contains(got, "provisioned") {
		t.Errorf("RayClusterProvisioningStuck fires for %v, want pending and not provisioned", got)
	}
	if got := firing["RayOperatorReconcileErrors"]; !slices.Equal(got, []string{"controller rayjob"}) {
		t.Errorf("RayOperatorReconcileErrors fires for %v, want [controller rayjob] (the growing counter)", got)
	}
}

// firingFor names the firing alerts' objects of namespace ns (by name) or
// controllers.
func firingFor(rule *rules.AlertingRule, ns string) []string {
	var out []string
	for _, a := range rule.ActiveAlerts() {
		if a.State != rules.StateFiring {
			continue
		}
		if c := a.Labels.Get("controller"); c != "" {
			out = append(out, "controller "+c)
		} else if a.Labels.Get("namespace") == ns {
			out = append(out, a.Labels.Get("name"))
		}
	}
	sort.Strings(out)
	return out
}

// loadCommand is a promqltest "load" of the scrape's counters and gauges,
// each held at its scraped value for evalSteps steps, plus the rayjob
// controller's reconcile errors growing by one a step.
func loadCommand(t *testing.T, body []byte) string {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "load %s\n", model.Duration(evalStep))
	for name, f := range families {
		for _, m := range f.GetMetric() {
			value, ok := sampleValue(f.GetType(), m)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "  %s %g+0x%d\n", seriesString(name, m.GetLabel(), ""), value, evalSteps)
			if name == "controller_runtime_reconcile_errors_total" && labelValue(m, "controller") == "rayjob" {
				fmt.Fprintf(&b, "  %s %g+1x%d\n", seriesString(name, m.GetLabel(), "growing"), value, evalSteps)
			}
		}
	}
	return b.String()
}

func sampleValue(typ dto.MetricType, m *dto.Metric) (float64, bool) {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// seriesString writes a series in PromQL notation; instance, when set,
// becomes the instance label (a second target).
func seriesString(name string, pairs []*dto.LabelPair, instance string) string {
	parts := make([]string, 0, len(pairs)+1)
	for _, p := range pairs {
		parts = append(parts, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
	}
	if instance != "" {
		parts = append(parts, fmt.Sprintf("instance=%q", instance))
	}
	return fmt.Sprintf("%s{%s}", name, strings.Join(parts, ","))
}

func labelValue(m *dto.Metric, name string) string {
	for _, p := range m.GetLabel() {
		if p.GetName() == name {
			return p.GetValue()
		}
	}
	return ""
}
