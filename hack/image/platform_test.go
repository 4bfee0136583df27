package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestPlatformEnv(t *testing.T) {
	cases := map[string]struct {
		platform string
		want     []string
		wantErr  bool
	}{
		"amd64 baseline":  {platform: "linux/amd64", want: []string{"GOOS=linux", "GOARCH=amd64", "GOAMD64=v1"}},
		"amd64 v3":        {platform: "linux/amd64/v3", want: []string{"GOOS=linux", "GOARCH=amd64", "GOAMD64=v3"}},
		"arm64 baseline":  {platform: "linux/arm64", want: []string{"GOOS=linux", "GOARCH=arm64", "GOARM64=v8.0"}},
		"arm64 v9":        {platform: "linux/arm64/v9", want: []string{"GOOS=linux", "GOARCH=arm64", "GOARM64=v9.0"}},
		"arm v6":          {platform: "linux/arm/v6", want: []string{"GOOS=linux", "GOARCH=arm", "GOARM=6"}},
		"s390x":           {platform: "linux/s390x", want: []string{"GOOS=linux", "GOARCH=s390x"}},
		"unknown variant": {platform: "linux/s390x/z15", wantErr: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := v1.ParsePlatform(c.platform)
			if err != nil {
				t.Fatal(err)
			}
			got, err := platformEnv(*p)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %t", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
