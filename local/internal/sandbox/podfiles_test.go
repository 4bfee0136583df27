package sandbox

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvConf(t *testing.T) {
	tests := map[string]struct {
		dns  DNSConfig
		want string
	}{
		"empty": {want: ""},
		"cluster first": {
			dns: DNSConfig{
				Nameservers: []string{"10.0.0.10"},
				Searches:    []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"},
				Options:     []string{"ndots:5"},
			},
			want: "nameserver 10.0.0.10\nsearch ns1.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
		},
		"two nameservers only": {
			dns:  DNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}},
			want: "nameserver 1.1.1.1\nnameserver 8.8.8.8\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolvConf(tc.dns)); diff != "" {
				t.Errorf("resolvConf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEtcHosts(t *testing.T) {
	const head = "# Hosts file of a ray-operator local pod.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n"
	ip := netip.MustParseAddr("10.244.0.7")
	tests := map[string]struct {
		spec SandboxSpec
		want string
	}{
		"hostname only": {
			spec: SandboxSpec{Namespace: "ns", Hostname: "head-0", ClusterDomain: "cluster.local"},
			want: head + "10.244.0.7\thead-0\n",
		},
		"subdomain gives an FQDN": {
			spec: SandboxSpec{Namespace: "ns", Hostname: "w1", Subdomain: "raycluster-headless", ClusterDomain: "example.org"},
			want: head + "10.244.0.7\tw1.raycluster-headless.ns.svc.example.org\tw1\n",
		},
		"host aliases": {
			spec: SandboxSpec{Namespace: "ns", Hostname: "p", ClusterDomain: "cluster.local", HostAliases: []HostEntry{
				{IP: "1.2.3.4", Hostnames: []string{"a", "b"}},
				{IP: "5.6.7.8", Hostnames: []string{"c"}},
			}},
			want: head + "10.244.0.7\tp\n\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n5.6.7.8\tc\n",
		},
		"host network has no own line": {
			spec: SandboxSpec{Namespace: "ns", Hostname: "p", HostNetwork: true},
			want: head,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, etcHosts(tc.spec, ip)); diff != "" {
				t.Errorf("etcHosts (-want +got):\n%s", diff)
			}
		})
	}
}
