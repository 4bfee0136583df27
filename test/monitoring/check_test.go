package monitoring

import (
	"strings"
	"testing"
)

const exposition = `# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="rayjob",result="success"} 3
controller_runtime_reconcile_total{controller="rayjob",result="error"} 0
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="rayjob",le="0.1"} 3
controller_runtime_reconcile_time_seconds_bucket{controller="rayjob",le="+Inf"} 3
controller_runtime_reconcile_time_seconds_sum{controller="rayjob"} 0.1
controller_runtime_reconcile_time_seconds_count{controller="rayjob"} 3
# TYPE kuberay_job_deployment_status gauge
kuberay_job_deployment_status{name="a",namespace="ns",deployment_status="Failed"} 1
`

func TestCheck(t *testing.T) {
	scrape, err := ParseScrape(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr string
		want string // a substring of the first error; "" for none
	}{
		{`sum by (controller, result) (rate(controller_runtime_reconcile_total[$__rate_interval]))`, ""},
		{`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[5m])))`, ""},
		{`sum by (job, instance) (controller_runtime_reconcile_time_seconds_count{job=~"$job"})`, ""},
		{`max by (namespace, name) (kuberay_job_deployment_status{deployment_status="Failed", namespace=~"$namespace"}) > 0`, ""},
		{`controller_runtime_reconcile_total{result=~"success|error"}`, ""},
		{`kuberay_job_deployment_status{deployment_status="Complete"}`, `no series kuberay_job_deployment_status{deployment_status="Complete"}`},
		{`controller_runtime_reconcile_total{result=~"success|requeue"}`, `result="requeue"`},
		{`sum(rate(controller_runtime_reconcile_errors_total[5m]))`, "no metric controller_runtime_reconcile_errors_total"},
		{`kuberay_job_deployment_status{uid="x"}`, "has no label uid"},
		{`sum by (le) (controller_runtime_reconcile_time_seconds_count)`, "aggregation by le"},
		{`kuberay_job_deployment_status * on (controller) controller_runtime_reconcile_total`, "vector matching by controller"},
		{`sum by (controller) (rate(controller_runtime_reconcile_total[5m])`, "unclosed left parenthesis"},
	} {
		errs := scrape.Check(Query{Source: "test", Expr: tc.expr})
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: unexpected errors %v", tc.expr, errs)
		case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: errors %v, want one containing %q", tc.expr, errs, tc.want)
		}
	}
}

func TestDashboardQueries(t *testing.T) {
	data := `{"panels": [{"type": "row", "panels": [{"title": "p", "targets": [{"refId": "A", "expr": "up"}]}]},
	  {"title": "q", "targets": [{"refId": "B", "expr": "sum(up)"}]}],
	  "templating": {"list": [{"name": "ds", "type": "datasource"}, {"name": "ns", "type": "query", "definition": "label_values(kuberay_job_info, namespace)"}]}}`
	queries, vars, err := DashboardQueries([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 2 || queries[0].Expr != "up" || queries[1].Expr != "sum(up)" {
		t.Errorf("queries = %v", queries)
	}
	if len(vars) != 1 || vars[0] != (LabelValues{Source: "variable ns", Metric: "kuberay_job_info", Label: "namespace"}) {
		t.Errorf("variables = %v", vars)
	}
	bad := `{"templating": {"list": [{"name": "x", "type": "query", "definition": "query_result(up)"}]}}`
	if _, _, err := DashboardQueries([]byte(bad)); err == nil || !strings.Contains(err.Error(), "is not label_values") {
		t.Errorf("a query_result variable: err = %v", err)
	}
}

func TestLoadRules(t *testing.T) {
	good := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    for: 5m\n    annotations:\n      summary: '{{ $labels.instance }} down'\n"
	queries, err := LoadRules([]byte(good))
	if err != nil || len(queries) != 1 || queries[0].Source != "rule g/A" || queries[0].Expr != "up == 0" {
		t.Fatalf("LoadRules = %v, %v", queries, err)
	}
	for name, bad := range map[string]string{
		"expression": "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(up\n",
		"template":   "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n      summary: '{{ $labels.instance'\n",
		"duration":   "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: ten minutes\n",
		"field":      "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    severity: page\n",
	} {
		if _, err := LoadRules([]byte(bad)); err == nil {
			t.Errorf("a bad %s loads", name)
		}
	}
}
