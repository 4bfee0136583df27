package fuzz

import (
	"reflect"
	"testing"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
)

// FuzzConfiguration: the --config decoder never panics, decodes the same
// bytes the same way, and whatever it accepts can be defaulted and
// validated.
func FuzzConfiguration(f *testing.F) {
	f.Add([]byte("apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nmetricsAddr: \":8080\"\nreconcileConcurrency: 2\n"))
	f.Add([]byte("apiVersion: config.ray.io/v1alpha1\nkind: Configuration\nfeatureGates:\n  RayCronJob: true\nbatchScheduler: volcano\n"))
	f.Add([]byte("{\"apiVersion\":\"config.ray.io/v1alpha1\",\"kind\":\"Configuration\",\"qps\":5,\"burst\":10}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := configv1alpha1.Decode(data)
		again, _, errAgain := configv1alpha1.Decode(data)
		if (err == nil) != (errAgain == nil) || !reflect.DeepEqual(cfg, again) {
			t.Fatalf("decoding twice differs: %v / %v", err, errAgain)
		}
		if err != nil {
			return
		}
		configv1alpha1.SetDefaults(&cfg)
		_ = configv1alpha1.Validate(&cfg, false)
	})
}
