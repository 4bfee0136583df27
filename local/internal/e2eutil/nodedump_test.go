package e2eutil

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// serveDNS answers A questions for name with addr on a UDP port of
// 127.0.0.1 until the test ends; every other name is NXDOMAIN.
func serveDNS(t *testing.T, name, addr string) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := dns.NewServeMux()
	mux.HandleFunc(".", func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		switch {
		case q.Question[0].Name != dns.Fqdn(name):
			m.Rcode = dns.RcodeNameError
		case q.Question[0].Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: net.ParseIP(addr)})
		}
		_ = w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: mux}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

func TestProbeDNS(t *testing.T) {
	server := serveDNS(t, kubernetesServiceName, "10.96.0.1")
	if got := ProbeDNS(t.Context(), server, kubernetesServiceName); !strings.HasPrefix(got, "10.96.0.1 in ") {
		t.Errorf("ProbeDNS(%s) = %q, want the Service's address", kubernetesServiceName, got)
	}
	missing := "head-svc.e2e-x.svc.cluster.local"
	if got := ProbeDNS(t.Context(), server, missing); !strings.Contains(got, "error after") || !strings.Contains(got, "no such host") {
		t.Errorf("ProbeDNS(%s) = %q, want no such host", missing, got)
	}
}

func TestProbeDNSNoServer(t *testing.T) {
	// A UDP port nobody answers on: the question times out.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	got := ProbeDNS(t.Context(), netip.MustParseAddrPort(pc.LocalAddr().String()), kubernetesServiceName)
	if !strings.HasPrefix(got, "error after ") {
		t.Errorf("ProbeDNS with no answer = %q, want an error", got)
	}
}

func TestTailFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coredns.log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{2: "two\nthree\n", 5: "one\ntwo\nthree\n"} {
		if got := tailFile(path, n); got != want {
			t.Errorf("tailFile(%d) = %q, want %q", n, got, want)
		}
	}
	if got := tailFile(filepath.Join(t.TempDir(), "none.log"), 3); !strings.Contains(got, "no such file") {
		t.Errorf("tailFile of a missing file = %q, want the error", got)
	}
}

func TestDumpBeforeTimeout(t *testing.T) {
	dumped := make(chan struct{})
	timer := dumpBeforeTimeout(time.Minute+10*time.Millisecond, time.Minute, func() { close(dumped) })
	if timer == nil {
		t.Fatal("nothing scheduled for a timeout longer than the lead")
	}
	select {
	case <-dumped:
	case <-t.Context().Done():
		t.Fatal("no dump before the timeout")
	}
}

func TestDumpBeforeTimeoutNone(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Minute} {
		if timer := dumpBeforeTimeout(timeout, time.Minute, func() {}); timer != nil {
			timer.Stop()
			t.Errorf("timeout %v, lead 1m: a dump was scheduled", timeout)
		}
	}
	timer := dumpBeforeTimeout(time.Hour, time.Minute, func() {})
	if timer == nil || !timer.Stop() {
		t.Error("timeout 1h, lead 1m: no dump pending")
	}
}

func TestTestTimeout(t *testing.T) {
	// go test gives every test binary a -timeout (10m unless told).
	if got := testTimeout(); got <= 0 {
		t.Errorf("testTimeout() = %v, want go test's -timeout", got)
	}
}
