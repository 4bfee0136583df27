package localpv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/resource"
	mount "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
)

// A volume's capacity is enforced by its filesystem: each volume is an ext4
// filesystem in a sparse file of the claim's size (ImageDir/<pv>.ext4),
// mounted through a loop device on its directory (Dir/<pv>). A pod that
// writes past it gets ENOSPC from its own filesystem; the host's disk gives
// the file no more than its size. mount(8) attaches the loop device with
// autoclear (it goes with the last unmount) and reuses the one already
// attached to the same file, so a second mount of a volume never runs two
// filesystems over one file.

// minImageSize is the smallest filesystem made: mkfs.ext4 needs room for its
// metadata and journal.
const minImageSize = 16 << 20

// imageSize is the size of the file holding a filesystem for request: the
// request rounded up to whole MiB, at least minImageSize.
func imageSize(request resource.Quantity) int64 {
	const mib = 1 << 20
	size := (request.Value() + mib - 1) / mib * mib
	return max(size, minImageSize)
}

// mounter formats and mounts the volumes' filesystems with the system's
// mkfs.ext4, blkid, fsck and mount (e2fsprogs and util-linux), as a
// kubelet mounts a block volume.
func mounter() *mount.SafeFormatAndMount {
	return mount.NewSafeFormatAndMount(mount.NewWithoutSystemd(""), utilexec.New())
}

// imagePath is the file holding the filesystem of volume name.
func (p *Provisioner) imagePath(name string) string {
	return filepath.Join(p.ImageDir, name+".ext4")
}

// createImage makes volume name's sparse file of size bytes, unless it
// exists (a Provision retried).
func (p *Provisioner) createImage(name string, size int64) error {
	f, err := os.OpenFile(p.imagePath(name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating the volume's file: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		_ = os.Remove(f.Name()) // so that a retry makes it again
		return fmt.Errorf("sizing the volume's file: %w", err)
	}
	return nil
}

// attach mounts volume name's filesystem on its directory, formatting the
// file first when it holds none yet, unless the directory is mounted
// already (the node restarted while its volumes stayed mounted).
func (p *Provisioner) attach(name string, options []string) error {
	dir := filepath.Join(p.Dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the volume's directory: %w", err)
	}
	m := mounter()
	notMounted, err := m.IsLikelyNotMountPoint(dir)
	if err != nil {
		return fmt.Errorf("checking the volume's mount: %w", err)
	}
	if !notMounted {
		return nil
	}
	if err := m.FormatAndMount(p.imagePath(name), dir, "ext4", append([]string{"loop"}, options...)); err != nil {
		return fmt.Errorf("mounting the volume's filesystem: %w", err)
	}
	return nil
}

// detach unmounts whatever is mounted on dir, which frees its loop device.
func detach(dir string) error {
	m := mounter()
	for {
		notMounted, err := m.IsLikelyNotMountPoint(dir)
		if errors.Is(err, fs.ErrNotExist) || err == nil && notMounted {
			return nil
		}
		if err != nil {
			return fmt.Errorf("checking the volume's mount: %w", err)
		}
		if err := m.Unmount(dir); err != nil {
			return fmt.Errorf("unmounting the volume: %w", err)
		}
	}
}

// DetachAll unmounts the filesystem of every volume in dir, the volume
// directory of a node whose pods are gone: the local cluster stops its node
// and pods, and the next run's control plane starts without their PVs, so
// the files stay, unmounted, with their data.
func DetachAll(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, detach(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}
