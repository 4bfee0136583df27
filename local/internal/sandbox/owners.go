package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// The owner registry is the machine's record of which processes run which
// hosts, so that a start can tell what a dead host left from what a live one
// holds, whatever its state directory. Each Network and each Host records
// itself (its state directory, bridge and process) before it makes
// anything and removes its record on Close; a killed one leaves its record
// behind. Everything of a host is named by its tag (see names), so a tag
// whose every recorded process is gone marks leftovers: the next Network or
// Host to start on the machine removes them (sweepDeadHost). A host that
// Detaches keeps its record: its sandboxes wait, while its process lives,
// for a host of the same tag to adopt them. The local cluster's process
// records the network of its node's tag, so a killed node process's pods
// are kept for the next node process as long as the cluster lives.

// defaultOwnerDir holds the records and their lock.
const defaultOwnerDir = runRoot + "/owners"

// ownerRole says what a process runs of a host: a process records a role
// of a tag once at a time.
type ownerRole string

const (
	roleNetwork ownerRole = "network"
	roleHost    ownerRole = "host"
	// roleClaim keeps a host's leftovers for a later adoption (tests that
	// kill the process running a host).
	roleClaim ownerRole = "claim"
)

// ownerRecord is one process's record of one host.
type ownerRecord struct {
	StateDir string    `json:"stateDir"`
	Bridge   string    `json:"bridge"`
	Role     ownerRole `json:"role"`
	// Owner is the process's identity, "<pid> <start time>".
	Owner string `json:"owner"`
}

// names are the host-global names of the recorded host.
func (r ownerRecord) names() names { return newNames(r.StateDir, r.Bridge) }

// ownerRegistry is the registry in dir.
type ownerRegistry struct {
	dir string
	log logr.Logger
}

func defaultOwners(log logr.Logger) ownerRegistry {
	return ownerRegistry{dir: defaultOwnerDir, log: log}
}

// file is where the record of role of the host tag by the process of
// identity lives.
func (r ownerRegistry) file(tag, identity string, role ownerRole) string {
	pid, _, _ := strings.Cut(identity, " ")
	return filepath.Join(r.dir, fmt.Sprintf("%s.%s.%s.json", tag, pid, role))
}

// enter removes what dead hosts left (but the host of cfg's own, which its
// caller sweeps or adopts) and records this process as running role of
// the host of cfg (StateDir and BridgeName completed), under the registry's
// lock: no host records itself while a dead one of its tag is swept. A
// failed sweep is logged, not returned: a dead host's leftovers do not
// keep another from starting, and its records stay for the next try.
func (r ownerRegistry) enter(ctx context.Context, cfg HostConfig, role ownerRole) error {
	unlock, err := lockDir(r.dir)
	if err != nil {
		return err
	}
	defer unlock()
	own := ownerRecord{StateDir: cfg.StateDir, Bridge: cfg.BridgeName, Role: role, Owner: processIdentity(os.Getpid())}
	if err := r.sweepDead(ctx, own); err != nil {
		r.log.Error(err, "Sweeping what dead local hosts left on this machine")
	}
	r.dropDead(own.names().tag)
	return r.record(own)
}

// record writes rec. The caller holds the lock.
func (r ownerRegistry) record(rec ownerRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(r.file(rec.names().tag, rec.Owner, rec.Role), data, 0o600)
}

// leave removes this process's record of role of the host with names n.
func (r ownerRegistry) leave(n names, role ownerRole) error {
	unlock, err := lockDir(r.dir)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(r.file(n.tag, processIdentity(os.Getpid()), role)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// sweepDead removes the leftovers of every recorded host whose processes
// are all gone, but own's (the host the caller starts), then their
// records. The caller holds the lock. What a dead host shares by name with
// a live one or own stays: its bridge and nftables table when they have
// the same bridge, its runc containers and the mounts under its state
// directory when they have the same state directory.
func (r ownerRegistry) sweepDead(ctx context.Context, own ownerRecord) error {
	byTag, err := r.read()
	if err != nil {
		return err
	}
	live := sharedNames{bridges: map[string]bool{own.Bridge: true}, stateDirs: map[string]bool{own.StateDir: true}}
	for _, recs := range byTag {
		if anyRuns(recs) {
			live.bridges[recs[0].Bridge], live.stateDirs[recs[0].StateDir] = true, true
		}
	}
	ownTag := own.names().tag
	var errs []error
	for tag, recs := range byTag {
		if tag == ownTag || anyRuns(recs) {
			continue
		}
		errs = append(errs, r.sweepDeadTag(ctx, recs, live))
	}
	return errors.Join(errs...)
}

// sharedNames are the bridges and state directories of live hosts.
type sharedNames struct {
	bridges, stateDirs map[string]bool
}

// sweepDeadTag removes what the dead host of recs left and, once that
// worked, its records.
func (r ownerRegistry) sweepDeadTag(ctx context.Context, recs []recordFile, live sharedNames) error {
	rec := recs[0]
	dead := deadHost{stateDir: rec.StateDir, names: rec.names(),
		ownsStateDir: !live.stateDirs[rec.StateDir], ownsNetwork: hasRole(recs, roleNetwork) && !live.bridges[rec.Bridge]}
	r.log.Info("Sweeping what a dead local host left", "stateDir", rec.StateDir, "bridge", rec.Bridge, "network", dead.ownsNetwork)
	if err := dead.sweep(ctx, r.log); err != nil {
		return fmt.Errorf("host %s (state directory %s): %w", dead.names.tag, rec.StateDir, err)
	}
	var errs []error
	for _, rec := range recs {
		if err := os.Remove(rec.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dropDead removes the records of tag whose processes are gone: the caller
// takes over what they left (it sweeps or adopts it). The caller holds the
// lock.
func (r ownerRegistry) dropDead(tag string) {
	byTag, err := r.read()
	if err != nil {
		return
	}
	for _, rec := range byTag[tag] {
		if !processRuns(rec.Owner) {
			_ = os.Remove(rec.path)
		}
	}
}

// recordFile is a record and the file it was read from.
type recordFile struct {
	ownerRecord
	path string
}

// read returns the records by tag; unreadable files are skipped.
func (r ownerRegistry) read() (map[string][]recordFile, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	byTag := map[string][]recordFile{}
	for _, e := range entries {
		tag, _, ok := strings.Cut(e.Name(), ".")
		if !ok || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(r.dir, e.Name())
		data, err := os.ReadFile(path)
		var rec ownerRecord
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.names().tag != tag {
			continue
		}
		byTag[tag] = append(byTag[tag], recordFile{ownerRecord: rec, path: path})
	}
	return byTag, nil
}

// anyRuns reports whether the process of one of recs still runs.
func anyRuns(recs []recordFile) bool {
	for _, rec := range recs {
		if processRuns(rec.Owner) {
			return true
		}
	}
	return false
}

func hasRole(recs []recordFile, role ownerRole) bool {
	for _, rec := range recs {
		if rec.Role == role {
			return true
		}
	}
	return false
}

// lockDir takes the file lock "lock" in dir, creating dir (0700) if
// needed, and returns its release.
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { _ = f.Close() }, nil
}
