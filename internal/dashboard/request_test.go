package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestNewJobSubmitRequest(t *testing.T) {
	cases := map[string]struct {
		spec    rayv1.RayJobSpec
		jobID   string
		want    *JobSubmitRequest
		wantErr bool
	}{
		"entrypoint and submission id": {
			spec:  rayv1.RayJobSpec{Entrypoint: "python x.py"},
			jobID: "rayjob-abc",
			want:  &JobSubmitRequest{Entrypoint: "python x.py", SubmissionID: "rayjob-abc"},
		},
		"runtime env, metadata and entrypoint resources": {
			spec: rayv1.RayJobSpec{
				Entrypoint:          "python x.py",
				Metadata:            map[string]string{"owner": "me"},
				RuntimeEnvYAML:      "pip:\n  - requests==2.26.0\nenv_vars:\n  counter_name: test_counter\n",
				EntrypointNumCpus:   1.5,
				EntrypointNumGpus:   1,
				EntrypointResources: `{"Custom_1": 1, "Custom_2": 5.5}`,
			},
			jobID: "j",
			want: &JobSubmitRequest{
				Entrypoint:   "python x.py",
				SubmissionID: "j",
				Metadata:     map[string]string{"owner": "me"},
				RuntimeEnv: RuntimeEnv{
					"pip":      []any{"requests==2.26.0"},
					"env_vars": map[string]any{"counter_name": "test_counter"},
				},
				EntrypointNumCPUs:   1.5,
				EntrypointNumGPUs:   1,
				EntrypointResources: map[string]float32{"Custom_1": 1, "Custom_2": 5.5},
			},
		},
		"runtime env that is not a map": {
			spec:    rayv1.RayJobSpec{RuntimeEnvYAML: "- a\n- b\n"},
			wantErr: true,
		},
		"entrypoint resources that are not JSON": {
			spec:    rayv1.RayJobSpec{EntrypointResources: "Custom_1: 1"},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := &rayv1.RayJob{Spec: tc.spec, Status: rayv1.RayJobStatus{JobID: tc.jobID}}
			got, err := NewJobSubmitRequest(job)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
