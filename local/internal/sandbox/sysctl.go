package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostSysctls are the kernel settings the host needs, as /proc/sys paths:
// forwarding for pod traffic, and bridged IPv4 traffic through the iptables
// and nftables hooks, so that kube-proxy's DNAT of a ClusterIP is undone on a
// reply that another pod sends across the bridge.
var hostSysctls = map[string]string{
	"/proc/sys/net/ipv4/ip_forward":                "1",
	"/proc/sys/net/bridge/bridge-nf-call-iptables": "1",
}

// sysctlRegistry is shared by every host on the machine (other processes'
// included): the kernel settings are machine-wide, so the first host to
// start records the machine's own values and the last one to close restores
// them. A host that closed while another still runs would otherwise turn
// forwarding off under it.
type sysctlRegistry struct {
	// dir holds "lock", "original.json" and one entry per host (its tag)
	// naming the process that runs it.
	dir string
	// settings maps /proc/sys paths to the values hosts need.
	settings map[string]string
}

const defaultSysctlRegistryDir = "/run/ray-operator-sandbox"

// acquire registers the host tag, records the machine's own values if no
// record exists (a record left by crashed hosts is kept: it has the true
// originals), and sets hostSysctls.
func (r sysctlRegistry) acquire(tag string) error {
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	original := filepath.Join(r.dir, "original.json")
	if _, err := os.Stat(original); errors.Is(err, os.ErrNotExist) {
		values, err := readSysctls(r.settings)
		if err != nil {
			return err
		}
		data, err := json.Marshal(values)
		if err != nil {
			return err
		}
		if err := os.WriteFile(original, data, 0o600); err != nil {
			return fmt.Errorf("record sysctls: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.dir, "host-"+tag), []byte(processIdentity(os.Getpid())), 0o600); err != nil {
		return err
	}
	for path, value := range r.settings {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			return fmt.Errorf("set %s: %w", path, err)
		}
	}
	return nil
}

// release unregisters the host tag and, if no other registered host still
// runs, restores the recorded values and removes the record.
func (r sysctlRegistry) release(tag string) error {
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(filepath.Join(r.dir, "host-"+tag)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if others, err := r.liveHosts(); err != nil || others > 0 {
		return err
	}
	original := filepath.Join(r.dir, "original.json")
	data, err := os.ReadFile(original)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var values map[string]string
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("read %s: %w", original, err)
	}
	var errs []error
	for path, value := range values {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", path, err))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, os.Remove(original))
	}
	return errors.Join(errs...)
}

// liveHosts counts registered hosts whose process still runs; entries of
// dead processes (crashed hosts) are removed.
func (r sysctlRegistry) liveHosts() (int, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return 0, err
	}
	live := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "host-") {
			continue
		}
		path := filepath.Join(r.dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if processRuns(string(data)) {
			live++
		} else {
			_ = os.Remove(path)
		}
	}
	return live, nil
}

// lock takes the registry's file lock, creating the directory if needed.
func (r sysctlRegistry) lock() (func(), error) { return lockDir(r.dir) }

// processIdentity is "<pid> <start time>": a PID alone may be reused.
func processIdentity(pid int) string {
	return strconv.Itoa(pid) + " " + processStartTime(pid)
}

// processRuns reports whether the process of an identity still runs.
func processRuns(identity string) bool {
	pidText, start, _ := strings.Cut(strings.TrimSpace(identity), " ")
	pid, err := strconv.Atoi(pidText)
	return err == nil && start != "" && processStartTime(pid) == start
}

// processStartTime is field 22 of /proc/<pid>/stat, or "" if there is no
// such process.
func processStartTime(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// fields[0] is field 3 (state); start time is field 22.
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// readSysctls reads the current values of the settings' paths.
func readSysctls(settings map[string]string) (map[string]string, error) {
	values := map[string]string{}
	for path := range settings {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s (is br_netfilter loaded?): %w", path, err)
		}
		values[path] = strings.TrimSpace(string(data))
	}
	return values, nil
}
