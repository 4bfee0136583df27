package validation

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestIdleTerminationOptions(t *testing.T) {
	idle := func(p rayv1.IdleTerminationPolicy, secs int32) *rayv1.IdleTerminationOptions {
		return &rayv1.IdleTerminationOptions{Policy: p, TimeoutSeconds: secs}
	}
	cases := map[string]struct {
		opts    *rayv1.IdleTerminationOptions
		wantErr string
	}{
		"unset":          {},
		"suspend":        {opts: idle(rayv1.IdleTerminationSuspend, 60)},
		"delete":         {opts: idle(rayv1.IdleTerminationDelete, 1)},
		"unknown policy": {opts: idle("Hibernate", 60), wantErr: `idleTerminationOptions.policy is "Hibernate"; it must be "Suspend" or "Delete"`},
		"no policy":      {opts: idle("", 60), wantErr: `idleTerminationOptions.policy is ""`},
		"zero timeout":   {opts: idle(rayv1.IdleTerminationSuspend, 0), wantErr: "idleTerminationOptions.timeoutSeconds is 0; it must be at least 1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			spec.IdleTerminationOptions = tc.opts
			err := RayClusterSpec(spec, nil, gates{})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestIdleTerminationRefusedInOwnedClusters(t *testing.T) {
	opts := &rayv1.IdleTerminationOptions{Policy: rayv1.IdleTerminationDelete, TimeoutSeconds: 60}
	job := rayJob()
	job.Spec.RayClusterSpec.IdleTerminationOptions = opts
	if err := RayJobSpec(&job.Spec, nil, gates{}); err == nil || !strings.Contains(err.Error(), errIdleTerminationOwned.Error()) {
		t.Errorf("RayJob: err = %v, want %q", err, errIdleTerminationOwned)
	}
	svc := wrappers.MakeRayService("svc", "ns").Obj()
	svc.Spec.RayClusterSpec.IdleTerminationOptions = opts
	if err := RayServiceSpec(svc, gates{}); err == nil || !strings.Contains(err.Error(), errIdleTerminationOwned.Error()) {
		t.Errorf("RayService: err = %v, want %q", err, errIdleTerminationOwned)
	}
}
