package main

import "testing"

func TestChooseTarget(t *testing.T) {
	const own = "/repo/.cache/local/kubeconfig"
	tests := map[string]struct {
		env       environment
		wantLocal bool
	}{
		"nothing: local":                  {env: environment{}, wantLocal: true},
		"KUBECONFIG: that cluster":        {env: environment{kubeconfigEnv: "/home/u/kc"}},
		"home kubeconfig: that cluster":   {env: environment{homeKubeconfig: "/home/u/.kube/config", homeKubeconfigSet: true}},
		"in cluster: that cluster":        {env: environment{inCluster: true}},
		"own kubeconfig from a past run":  {env: environment{kubeconfigEnv: own, homeKubeconfigSet: true}, wantLocal: true},
		"own kubeconfig, relative form":   {env: environment{kubeconfigEnv: "/repo/.cache/local/../local/kubeconfig"}, wantLocal: true},
		"a list holding own kubeconfig":   {env: environment{kubeconfigEnv: "/a:" + own}},
		"--local wins over a kubeconfig":  {env: environment{kubeconfigEnv: "/home/u/kc", forceLocal: true}, wantLocal: true},
		"KUBECONFIG wins over in-cluster": {env: environment{kubeconfigEnv: "/home/u/kc", inCluster: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.env.ownKubeconfig = own
			got := chooseTarget(tc.env)
			if got.local != tc.wantLocal {
				t.Errorf("chooseTarget() = %+v, want local=%v", got, tc.wantLocal)
			}
			if got.reason == "" {
				t.Error("chooseTarget() gave no reason")
			}
		})
	}
}
