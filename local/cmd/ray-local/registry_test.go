package main

import (
	"flag"
	"net/netip"
	"testing"
)

func TestRegistryFlag(t *testing.T) {
	cases := map[string]struct {
		args      []string
		want      netip.AddrPort
		wantError string
	}{
		"default":      {want: netip.MustParseAddrPort("127.0.0.1:5001")},
		"another port": {args: []string{"--registry=127.0.0.1:6000"}, want: netip.MustParseAddrPort("127.0.0.1:6000")},
		"none":         {args: []string{"--registry="}},
		"not loopback": {args: []string{"--registry=0.0.0.0:5001"}, wantError: `--registry "0.0.0.0:5001": want a loopback address and port (127.0.0.1:5001)`},
		"no port":      {args: []string{"--registry=127.0.0.1"}, wantError: `--registry "127.0.0.1": want a loopback address and port (127.0.0.1:5001)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("ray-local", flag.ContinueOnError)
			l := bindLocalFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := l.parseNodeFlags()
			if tc.wantError != "" {
				if err == nil || err.Error() != tc.wantError {
					t.Errorf("error = %v, want %s", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.registry != tc.want {
				t.Errorf("registry %v, want %v", l.registry, tc.want)
			}
		})
	}
}
