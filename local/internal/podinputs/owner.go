package podinputs

import (
	"fmt"
	"os"
	"syscall"
)

// ownerOf returns the uid and gid of path (not a symlink's target).
func ownerOf(path string) (uid, gid int, err error) {
	info, err := os.Lstat(path)
	if err != nil {
		return 0, 0, err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("%s: no owner information", path)
	}
	return int(st.Uid), int(st.Gid), nil
}
