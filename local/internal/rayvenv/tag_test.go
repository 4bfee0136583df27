package rayvenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTag(t *testing.T) {
	cases := map[string]struct {
		want    Request
		wantErr string
	}{
		"":                         {want: Request{Version: "2.60.0"}},
		"latest":                   {want: Request{Version: "2.60.0"}},
		"nightly":                  {want: Request{Version: "2.60.0"}},
		"nightly-py311-cpu":        {want: Request{Version: "2.60.0", Python: "3.11"}},
		"2.41.0":                   {want: Request{Version: "2.41.0"}},
		"2.9.3-py39":               {want: Request{Version: "2.9.3", Python: "3.9"}},
		"2.52.0-py311":             {want: Request{Version: "2.52.0", Python: "3.11"}},
		"2.52.0-py311-cpu":         {want: Request{Version: "2.52.0", Python: "3.11"}},
		"2.52.0-gpu":               {want: Request{Version: "2.52.0"}},
		"2.52.0-cu121":             {want: Request{Version: "2.52.0"}},
		"2.41.0-aarch64":           {want: Request{Version: "2.41.0"}},
		"2.41.0-py310-cpu-aarch64": {want: Request{Version: "2.41.0", Python: "3.10"}},
		"2.40.0-slim-py312-cu125":  {want: Request{Version: "2.40.0", Python: "3.12"}},
		"2.10.0-extra":             {want: Request{Version: "2.10.0"}},
		"2.41":                     {wantErr: `tag "2.41" names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64`},
		"v2.41.0":                  {wantErr: `tag "v2.41.0" names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64`},
		"2.41.0rc1":                {wantErr: `tag "2.41.0rc1" names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64`},
		"dev":                      {wantErr: `tag "dev" names no Ray release: a Ray image tag is X.Y.Z, latest or nightly, then -pyNNN, -cpu, -gpu, -cuNNN or -aarch64`},
		"2.41.0-py2":               {wantErr: `tag "2.41.0-py2": "py2" is no Ray image variant (-pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra)`},
		"2.41.0-tpu":               {wantErr: `tag "2.41.0-tpu": "tpu" is no Ray image variant (-pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra)`},
		"2.41.0-":                  {wantErr: `tag "2.41.0-": "" is no Ray image variant (-pyNNN, -cpu, -gpu, -cuNNN, -aarch64, -slim, -extra)`},
	}
	for tag, tc := range cases {
		t.Run(tag, func(t *testing.T) {
			got, err := ParseTag(tag, "2.60.0")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseTag(%q) error = %v, want %q", tag, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTag(%q): %v", tag, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTag(%q) (-want +got):\n%s", tag, diff)
			}
		})
	}
}
