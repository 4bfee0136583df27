package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MachineUsage is what the whole machine uses: the node's figures in the
// kubelet API's resource metrics, read from /proc rather than summed over
// the pods, so that they include the host's own processes as a kubelet's
// root-cgroup figures do.
type MachineUsage struct {
	Usage
	// BootTime is when the machine started (/proc/stat btime).
	BootTime time.Time
}

// userHZ is the unit of /proc/stat's CPU times (USER_HZ), 100 on every
// Linux architecture Go supports.
const userHZ = 100

// ReadMachineUsage reads the machine's CPU time (/proc/stat: every state
// but idle and iowait) and memory (/proc/meminfo: MemoryBytes is MemTotal
// less MemFree, the working set that less Inactive(file)) under procDir
// (/proc). RSSBytes stays zero.
func ReadMachineUsage(procDir string) (MachineUsage, error) {
	mem, err := statFields(filepath.Join(procDir, "meminfo"), "MemTotal", "MemFree", "Inactive(file)")
	if err != nil {
		return MachineUsage{}, err
	}
	var m MachineUsage
	m.MemoryBytes = (mem[0] - min(mem[1], mem[0])) << 10 // kB
	m.WorkingSetBytes = m.MemoryBytes - min(mem[2]<<10, m.MemoryBytes)
	data, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return MachineUsage{}, fmt.Errorf("reading machine usage: %w", err)
	}
	if m.CPU, m.BootTime, err = parseProcStat(string(data)); err != nil {
		return MachineUsage{}, fmt.Errorf("%s: %w", filepath.Join(procDir, "stat"), err)
	}
	return m, nil
}

// parseProcStat returns the busy CPU time of the "cpu" line (user, nice,
// system, irq, softirq, steal; guest time is within user) and btime.
func parseProcStat(stat string) (time.Duration, time.Time, error) {
	var cpu time.Duration
	var boot time.Time
	for line := range strings.Lines(stat) {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 8 && fields[0] == "cpu":
			var ticks uint64
			for _, i := range []int{1, 2, 3, 6, 7, 8} {
				v, err := strconv.ParseUint(fields[i], 10, 64)
				if err != nil {
					return 0, time.Time{}, err
				}
				ticks += v
			}
			cpu = time.Duration(ticks) * (time.Second / userHZ) //nolint:gosec // ticks of CPU time fit an int64
		case len(fields) == 2 && fields[0] == "btime":
			secs, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, time.Time{}, err
			}
			boot = time.Unix(secs, 0)
		}
	}
	if cpu == 0 || boot.IsZero() {
		return 0, time.Time{}, errors.New("no cpu line or btime")
	}
	return cpu, boot, nil
}
