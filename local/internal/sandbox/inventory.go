package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/nftables"
)

// Inventory is what the machine holds of one Host at one moment: the
// objects a pod's sandbox creates and its removal must take away again.
// Comparing an Inventory taken after a workload is gone with one taken
// before it started finds leaks (the soak, local/test/soak, does).
type Inventory struct {
	// Sandboxes are the pod UIDs with a directory under the state
	// directory.
	Sandboxes []string
	// Netns are the named network namespaces of this host.
	Netns []string
	// Cgroups are the cgroup directories below this host's parent, in
	// every hierarchy (the parent itself not counted).
	Cgroups []string
	// NftRules counts the rules of every nftables table of the machine
	// (the host's own table and the NetworkPolicy enforcer's included).
	NftRules int
}

// ReadInventory lists what a host with cfg's StateDir and BridgeName
// (default DefaultBridgeName) holds on the machine now, whichever process
// runs it; it only reads.
func ReadInventory(cfg HostConfig) (Inventory, error) {
	cfg, err := networkDefaults(cfg)
	if err != nil {
		return Inventory{}, err
	}
	return inventoryOf(cfg.StateDir, newNames(cfg.StateDir, cfg.BridgeName))
}

func inventoryOf(stateDir string, n names) (Inventory, error) {
	var inv Inventory
	var errs []error
	var err error
	if inv.Sandboxes, err = dirNames(filepath.Join(stateDir, "pods"), ""); err != nil {
		errs = append(errs, fmt.Errorf("sandboxes: %w", err))
	}
	if inv.Netns, err = dirNames(netnsDir, n.netnsNamePrefix()); err != nil {
		errs = append(errs, fmt.Errorf("network namespaces: %w", err))
	}
	if inv.Cgroups, err = cgroupsBelowParent(n); err != nil {
		errs = append(errs, fmt.Errorf("cgroups: %w", err))
	}
	if inv.NftRules, err = countNftRules(); err != nil {
		errs = append(errs, fmt.Errorf("nftables rules: %w", err))
	}
	return inv, errors.Join(errs...)
}

// dirNames lists the entries of dir whose names start with prefix, sorted;
// a missing dir has none.
func dirNames(dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// cgroupsBelowParent lists the cgroup directories below the parent of a
// host with names n in every hierarchy, relative to the hierarchy's root,
// sorted.
func cgroupsBelowParent(n names) ([]string, error) {
	roots, err := cgroupRoots()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, root := range roots {
		parent := filepath.Join(root, n.cgroupParent())
		for _, d := range cgroupDirs(parent) {
			if d != parent {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// countNftRules counts the rules of every chain of every nftables table.
func countNftRules() (int, error) {
	c, err := nftables.New()
	if err != nil {
		return 0, err
	}
	chains, err := c.ListChains()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ch := range chains {
		rules, err := c.GetRules(ch.Table, ch)
		if err != nil {
			return 0, fmt.Errorf("chain %s of table %s: %w", ch.Name, ch.Table.Name, err)
		}
		n += len(rules)
	}
	return n, nil
}
