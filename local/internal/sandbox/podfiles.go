package sandbox

import (
	"net/netip"
	"strings"
)

// resolvConf renders a pod's /etc/resolv.conf.
func resolvConf(dns DNSConfig) string {
	var b strings.Builder
	for _, ns := range dns.Nameservers {
		b.WriteString("nameserver " + ns + "\n")
	}
	if len(dns.Searches) > 0 {
		b.WriteString("search " + strings.Join(dns.Searches, " ") + "\n")
	}
	if len(dns.Options) > 0 {
		b.WriteString("options " + strings.Join(dns.Options, " ") + "\n")
	}
	return b.String()
}

// podFQDN is <hostname>.<subdomain>.<namespace>.svc.<domain>, or "" without
// a subdomain.
func podFQDN(spec SandboxSpec) string {
	if spec.Subdomain == "" {
		return ""
	}
	return strings.Join([]string{spec.Hostname, spec.Subdomain, spec.Namespace, "svc", spec.ClusterDomain}, ".")
}

// etcHosts renders a pod's /etc/hosts: the loopback and IPv6 multicast lines,
// the pod's own address with its FQDN and hostname, then the host aliases.
// A host-network pod gets no line of its own, as its address is the node's.
func etcHosts(spec SandboxSpec, ip netip.Addr) string {
	var b strings.Builder
	b.WriteString("# Hosts file of a ray-operator local pod.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if !spec.HostNetwork {
		if fqdn := podFQDN(spec); fqdn != "" {
			b.WriteString(ip.String() + "\t" + fqdn + "\t" + spec.Hostname + "\n")
		} else {
			b.WriteString(ip.String() + "\t" + spec.Hostname + "\n")
		}
	}
	if len(spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, e := range spec.HostAliases {
			b.WriteString(e.IP + "\t" + strings.Join(e.Hostnames, "\t") + "\n")
		}
	}
	return b.String()
}

// loginProfile is every container's /etc/profile. The host's (Debian's)
// sets PATH for login shells, which would drop the image's PATH (the Ray
// virtualenv's bin) from KubeRay's `bash -lc` commands; the Ubuntu-based
// images that pods name leave PATH alone, and so does this one. It still
// reads /etc/bash.bashrc and /etc/profile.d like theirs.
const loginProfile = `# /etc/profile of the local node's containers: as the images' own, it
# keeps the container's PATH.
if [ "${PS1-}" ] && [ "${BASH-}" ] && [ "$BASH" != "/bin/sh" ] && [ -f /etc/bash.bashrc ]; then
  . /etc/bash.bashrc
fi
if [ -d /etc/profile.d ]; then
  for i in /etc/profile.d/*.sh; do
    if [ -r "$i" ]; then
      . "$i"
    fi
  done
  unset i
fi
`
