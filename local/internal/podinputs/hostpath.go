package podinputs

import (
	"errors"
	"io/fs"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// checkHostPath applies a hostPath volume's type: the OrCreate types create
// what is missing, the others require it to exist with that type.
func checkHostPath(src *corev1.HostPathVolumeSource) error {
	p := src.Path
	t := corev1.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	info, err := os.Stat(p)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	switch t {
	case corev1.HostPathUnset:
		return nil
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			return os.MkdirAll(p, 0o755)
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
	}
	if !exists {
		return configErrorf("hostPath type check failed: %s does not exist", p)
	}
	return checkHostPathType(p, t, info.Mode())
}

func checkHostPathType(p string, t corev1.HostPathType, mode fs.FileMode) error {
	var ok bool
	var what string
	switch t {
	case corev1.HostPathDirectory, corev1.HostPathDirectoryOrCreate:
		ok, what = mode.IsDir(), "a directory"
	case corev1.HostPathFile, corev1.HostPathFileOrCreate:
		ok, what = mode.IsRegular(), "a file"
	case corev1.HostPathSocket:
		ok, what = mode&fs.ModeSocket != 0, "a socket file"
	case corev1.HostPathCharDev:
		ok, what = mode&fs.ModeCharDevice != 0, "a character device"
	case corev1.HostPathBlockDev:
		ok, what = mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0, "a block device"
	default:
		return configErrorf("hostPath type %q is not known", t)
	}
	if !ok {
		return configErrorf("hostPath type check failed: %s is not %s", p, what)
	}
	return nil
}
