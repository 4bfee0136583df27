package v1

import "testing"

func TestIsAuthEnabled(t *testing.T) {
	tests := map[string]struct {
		spec *RayClusterSpec
		want bool
	}{
		"nil spec":             {spec: nil, want: false},
		"no authOptions":       {spec: &RayClusterSpec{}, want: false},
		"unset mode is token":  {spec: &RayClusterSpec{AuthOptions: &AuthOptions{}}, want: true},
		"token":                {spec: &RayClusterSpec{AuthOptions: &AuthOptions{Mode: AuthModeToken}}, want: true},
		"disabled":             {spec: &RayClusterSpec{AuthOptions: &AuthOptions{Mode: AuthModeDisabled}}, want: false},
		"secretName, no mode":  {spec: &RayClusterSpec{AuthOptions: &AuthOptions{SecretName: new("mine")}}, want: true},
		"disabled with secret": {spec: &RayClusterSpec{AuthOptions: &AuthOptions{Mode: AuthModeDisabled, SecretName: new("mine")}}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsAuthEnabled(tc.spec); got != tc.want {
				t.Errorf("IsAuthEnabled() = %v, want %v", got, tc.want)
			}
		})
	}
}
