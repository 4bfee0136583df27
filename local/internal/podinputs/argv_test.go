package podinputs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "B": "b", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	cases := map[string]string{
		"":                      "",
		"plain":                 "plain",
		"$(A)":                  "a",
		"x$(A)y$(B)z":           "xaybz",
		"$$(A)":                 "$(A)",
		"$$$(A)":                "$a",
		"$$$$(A)":               "$$(A)",
		"$(MISSING)":            "$(MISSING)",
		"$(EMPTY)-":             "-",
		"$(A":                   "$(A",
		"$(A$(B)":               "$(A$(B)",
		"$()":                   "$()",
		"$A $":                  "$A $",
		"price $5":              "price $5",
		"$(A)$(A)":              "aa",
		"--port=$(A)$$":         "--port=a$",
		"$(A) $(MISSING) $(B)":  "a $(MISSING) b",
		"tail $":                "tail $",
		"$$":                    "$",
		"nested $($(A))":        "nested $($(A))",
		"spaces $( A )":         "spaces $( A )",
		"after unterminated $(": "after unterminated $(",
	}
	for in, want := range cases {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgv(t *testing.T) {
	img := Image{Ref: "img", Entrypoint: []string{"/entry", "$(A)"}, Cmd: []string{"cmd", "$(A)"}}
	noEntry := Image{Ref: "rayproject/ray", Cmd: []string{"/bin/bash"}}
	env := []string{"A=a", "B=b", "A=last"}
	cases := []struct {
		name    string
		img     Image
		c       corev1.Container
		want    []string
		wantErr *ConfigError
	}{
		{name: "image defaults", img: img, want: []string{"/entry", "$(A)", "cmd", "$(A)"}},
		{name: "args replace CMD", img: img, c: corev1.Container{Args: []string{"x", "$(B)"}},
			want: []string{"/entry", "$(A)", "x", "b"}},
		{name: "command replaces ENTRYPOINT and drops CMD", img: img, c: corev1.Container{Command: []string{"/bin/sh", "-c", "echo $(A) $$(A) $(NOPE)"}},
			want: []string{"/bin/sh", "-c", "echo last $(A) $(NOPE)"}},
		{name: "command and args", img: img, c: corev1.Container{Command: []string{"ray"}, Args: []string{"start", "--port=$(B)"}},
			want: []string{"ray", "start", "--port=b"}},
		{name: "ray image CMD", img: noEntry, want: []string{"/bin/bash"}},
		{name: "ray image args only", img: noEntry, c: corev1.Container{Args: []string{"ray", "start"}},
			want: []string{"ray", "start"}},
		{name: "nothing to run", img: Image{Ref: "empty"}, c: corev1.Container{Name: "c"},
			wantErr: &ConfigError{Reason: ReasonCreateContainerError, Message: "no command specified: container c sets no command and image empty has none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Argv(tc.img, &tc.c, env)
			if diff := cmp.Diff(tc.wantErr, configError(err), cmpConfigError); diff != "" {
				t.Fatalf("Argv error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Argv (-want +got):\n%s", diff)
			}
		})
	}
}
