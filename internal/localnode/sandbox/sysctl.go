package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// sysctlRecordName is the file under StateDir that keeps the values found
// before the first host changed them, so that a host started after a crash
// still restores the machine's own values.
const sysctlRecordName = "sysctls.json"

// applySysctls sets hostSysctls and returns the values to restore. It takes
// the values to restore from the record a crashed run left, else from the
// kernel, and writes the record before changing anything.
func applySysctls(stateDir string) (map[string]string, error) {
	record := filepath.Join(stateDir, sysctlRecordName)
	old, err := readSysctlRecord(record)
	if err != nil {
		return nil, err
	}
	if old == nil {
		if old, err = readSysctls(); err != nil {
			return nil, err
		}
		data, err := json.Marshal(old)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(record, data, 0o600); err != nil {
			return nil, fmt.Errorf("record sysctls: %w", err)
		}
	}
	for path, value := range hostSysctls {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			return old, fmt.Errorf("set %s: %w", path, err)
		}
	}
	return old, nil
}

func readSysctlRecord(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var old map[string]string
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return old, nil
}

func readSysctls() (map[string]string, error) {
	old := map[string]string{}
	for path := range hostSysctls {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s (is br_netfilter loaded?): %w", path, err)
		}
		old[path] = strings.TrimSpace(string(data))
	}
	return old, nil
}

// restoreSysctls writes the old values back and removes the record.
func restoreSysctls(stateDir string, old map[string]string) error {
	var errs []error
	for path, value := range old {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", path, err))
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(filepath.Join(stateDir, sysctlRecordName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
