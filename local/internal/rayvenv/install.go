package rayvenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultInstallTimeout bounds one install when Installer.Timeout is zero:
// a cold install of ray[default,serve] takes 15-60 s here, and pip's own
// timeouts (hack/ray-venv.sh) end an unreachable PyPI within about a minute.
const DefaultInstallTimeout = 10 * time.Minute

// Installer builds the virtualenv of a Ray release with its script,
// hack/ray-venv.sh: the one place that knows how (the pip requirement, the
// pins older releases need, the relocatable layout), used by the e2e
// suites and `make` as well. The script caches each release's virtualenv
// outside the clone, and a file lock per release makes pods of one release
// that start together wait for one install.
type Installer struct {
	// Script is the path of hack/ray-venv.sh.
	Script string
	// Timeout bounds one install; zero means DefaultInstallTimeout.
	Timeout time.Duration
}

// InstallError is an install that failed: Reason is the essence of the
// script's error output (pip's ERROR lines, or why PyPI was unreachable).
type InstallError struct {
	Version, Reason string
}

// Error implements error.
func (e *InstallError) Error() string {
	return fmt.Sprintf("installing ray[default,serve]==%s: %s", e.Version, e.Reason)
}

// Install returns the virtualenv of version, installing it first unless
// the cache already holds it.
func (i Installer) Install(ctx context.Context, version string) (Venv, error) {
	timeout := i.Timeout
	if timeout == 0 {
		timeout = DefaultInstallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, i.Script, version)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// pip runs in the script's process group: a timeout ends all of it,
	// so that no orphan holds the release's lock.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Venv{}, &InstallError{Version: version, Reason: fmt.Sprintf("no result within %s", timeout)}
	case err != nil:
		return Venv{}, &InstallError{Version: version, Reason: essence(stderr.String(), err)}
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	venv, err := Read(lines[len(lines)-1])
	if err != nil {
		return Venv{}, &InstallError{Version: version, Reason: err.Error()}
	}
	return venv, nil
}

// unreachable are what pip's warnings say when PyPI cannot be reached.
var unreachable = []string{"NewConnectionError", "NameResolutionError", "ConnectTimeoutError", "Read timed out", "ProxyError", "Network is unreachable"}

// essence is what a failed install's output says went wrong: pip's ERROR
// lines, without the list of the versions it found, and whether PyPI
// could not be reached; else the output's last line.
func essence(output string, err error) string {
	var reasons []string
	offline := ""
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(line)
		if msg, ok := strings.CutPrefix(line, "ERROR: "); ok {
			reasons = append(reasons, dropVersionList(msg))
		}
		for _, u := range unreachable {
			if offline == "" && strings.Contains(line, u) {
				offline = "PyPI is unreachable (" + u + ")"
			}
		}
	}
	if offline != "" {
		reasons = append([]string{offline}, reasons...)
	}
	if len(reasons) == 0 {
		lines := strings.Split(strings.TrimSpace(output), "\n")
		reasons = append(reasons, strings.TrimSpace(lines[len(lines)-1]), err.Error())
	}
	return strings.Join(reasons, "; ")
}

// dropVersionList shortens pip's "(from versions: 2.3.0, 2.3.1, ...)" to
// its newest entry: the list of every release says little.
func dropVersionList(msg string) string {
	start := strings.Index(msg, "(from versions: ")
	end := strings.LastIndex(msg, ")")
	if start < 0 || end < start {
		return msg
	}
	versions := strings.Split(msg[start+len("(from versions: "):end], ", ")
	if len(versions) > 1 {
		return msg[:start] + "(newest: " + versions[len(versions)-1] + ")" + msg[end+1:]
	}
	return msg
}
