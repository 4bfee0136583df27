package serveapps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

const sampleConfig = `applications:
  - name: math
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    deployments:
      - name: MangoStand
        num_replicas: 1
        user_config:
          price: 3
`

func TestConfigJSON(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		tc      *int32
		want    map[string]any
		wantErr bool
	}{
		"applications": {yaml: sampleConfig, want: map[string]any{"applications": []any{map[string]any{
			"name": "math", "import_path": "fruit.deployment_graph", "route_prefix": "/fruit",
			"deployments": []any{map[string]any{"name": "MangoStand", "num_replicas": float64(1), "user_config": map[string]any{"price": float64(3)}}},
		}}}},
		"target capacity":              {yaml: "applications: []", tc: ptr.To[int32](40), want: map[string]any{"applications": []any{}, "target_capacity": float64(40)}},
		"zero target capacity is sent": {yaml: "applications: []", tc: ptr.To[int32](0), want: map[string]any{"applications": []any{}, "target_capacity": float64(0)}},
		"empty":                        {yaml: "", want: map[string]any{}},
		"not a map":                    {yaml: "- a\n- b", wantErr: true},
		"not YAML":                     {yaml: "applications: [", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			raw, err := ConfigJSON(tc.yaml, tc.tc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				if Validate(tc.yaml) == nil {
					t.Error("Validate accepted what ConfigJSON refuses")
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordAndNeedsApply(t *testing.T) {
	big := "applications: []\n#" + strings.Repeat("x", maxRecordedConfig)
	if got, ok := RecordedConfig(Record(sampleConfig)); !ok || got != sampleConfig {
		t.Errorf("a small config is not kept in full: %q, %v", got, ok)
	}
	if rec := Record(big); !strings.HasPrefix(rec, hashPrefix) || len(rec) > 100 {
		t.Errorf("a large config is recorded as %d bytes, want its hash", len(rec))
	}
	if _, ok := RecordedConfig(Record(big)); ok {
		t.Error("a hashed record claims to keep the config")
	}
	tests := map[string]struct {
		recorded, config string
		apps             int
		want             bool
	}{
		"never applied":                     {recorded: "", config: sampleConfig, apps: 1, want: true},
		"applied":                           {recorded: Record(sampleConfig), config: sampleConfig, apps: 1, want: false},
		"changed":                           {recorded: Record(sampleConfig), config: sampleConfig + "#", apps: 1, want: true},
		"applied but no applications":       {recorded: Record(sampleConfig), config: sampleConfig, apps: 0, want: true},
		"large, applied":                    {recorded: Record(big), config: big, apps: 1, want: false},
		"large, changed":                    {recorded: Record(big), config: big + "y", apps: 1, want: true},
		"empty config":                      {recorded: "", config: " \n", apps: 0, want: false},
		"a config that looks like a record": {recorded: Record("sha256:abc"), config: "sha256:abc", apps: 1, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := NeedsApply(tc.recorded, tc.config, tc.apps); got != tc.want {
				t.Errorf("NeedsApply = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatusesAndAllRunning(t *testing.T) {
	app := func(status string, deps map[string]string) dashboard.ServeApplicationDetails {
		a := dashboard.ServeApplicationDetails{ServeApplicationStatus: dashboard.ServeApplicationStatus{Status: status, Message: "m-" + status}}
		a.Deployments = map[string]dashboard.ServeDeploymentDetails{}
		for n, s := range deps {
			a.Deployments[n] = dashboard.ServeDeploymentDetails{ServeDeploymentStatus: dashboard.ServeDeploymentStatus{Name: n, Status: s}}
		}
		return a
	}
	details := &dashboard.ServeDetails{Applications: map[string]dashboard.ServeApplicationDetails{
		"":     app("RUNNING", map[string]string{"D": "HEALTHY"}),
		"math": app("DEPLOYING", map[string]string{"A": "UPDATING", "B": "HEALTHY"}),
	}}
	want := map[string]rayv1.AppStatus{
		"default": {Status: "RUNNING", Message: "m-RUNNING", Deployments: map[string]rayv1.ServeDeploymentStatus{"D": {Status: "HEALTHY"}}},
		"math":    {Status: "DEPLOYING", Message: "m-DEPLOYING", Deployments: map[string]rayv1.ServeDeploymentStatus{"A": {Status: "UPDATING"}, "B": {Status: "HEALTHY"}}},
	}
	got := Statuses(details)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Statuses (-want +got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		apps map[string]rayv1.AppStatus
		want bool
	}{
		"no applications": {apps: Statuses(&dashboard.ServeDetails{}), want: false},
		"one deploying":   {apps: got, want: false},
		"all running":     {apps: map[string]rayv1.AppStatus{"a": {Status: "RUNNING"}, "b": {Status: "RUNNING"}}, want: true},
		"unhealthy":       {apps: map[string]rayv1.AppStatus{"a": {Status: "RUNNING"}, "b": {Status: "UNHEALTHY"}}, want: false},
		"deploy failed":   {apps: map[string]rayv1.AppStatus{"a": {Status: "DEPLOY_FAILED"}}, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AllRunning(tc.apps); got != tc.want {
				t.Errorf("AllRunning = %v, want %v", got, tc.want)
			}
		})
	}
}
