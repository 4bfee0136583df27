package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeFlags(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	file := filepath.Join(a, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args      []string
		allow     bool
		dirs      []string
		wantError string
	}{
		"defaults: nothing allowed": {},
		"both flags, spaces and empty items ignored": {
			args:  []string{"--allow-host-privileges", "--shared-host-dirs= " + a + ", ," + b},
			allow: true, dirs: []string{a, b},
		},
		"relative directory": {
			args:      []string{"--shared-host-dirs=data"},
			wantError: `--shared-host-dirs: shared directory "data": not an absolute path`,
		},
		"missing directory": {
			args:      []string{"--shared-host-dirs=" + a + "/nope"},
			wantError: "--shared-host-dirs: shared directory " + a + "/nope: does not exist",
		},
		"zero sync frequency": {
			args:      []string{"--sync-frequency=0s"},
			wantError: "--sync-frequency must be positive, got 0s",
		},
		"a file": {
			args:      []string{"--shared-host-dirs=" + file},
			wantError: "--shared-host-dirs: shared directory " + file + ": not a directory",
		},
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
			if l.allowHostPrivileges != tc.allow || !cmp.Equal(l.sharedHostDirs, tc.dirs) {
				t.Errorf("allow = %t, dirs = %q; want %t, %q", l.allowHostPrivileges, l.sharedHostDirs, tc.allow, tc.dirs)
			}
		})
	}
}
