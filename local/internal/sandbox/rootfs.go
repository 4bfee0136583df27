package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A container's root file system is an overlay whose lower layer is the
// pod's base root (rootBase) and whose upper layer is the container's own;
// the host's system directories are bind-mounted over it read-only. Nothing
// else of the host is there: no /root, /home, /var, no caches or keys.

// systemDirs are the host directories every container gets read-only at the
// same place: executables, libraries and the data they read. On a merged-/usr
// host (/bin -> usr/bin) the others are symlinks into /usr, copied as such.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the /etc files copied from the host into every pod's base
// root, and etcDirs the /etc directories bind-mounted read-only: what
// programs of the images read (name service, dynamic linker, alternatives,
// certificates, time zone, shell start-up, Python's settings). Everything
// else of the host's /etc is absent: shadow files, SSH keys, sudoers, the
// host's users, private keys under /etc/ssl/private.
var (
	etcFiles = []string{
		"bash.bashrc", "bindresvport.blacklist", "ca-certificates.conf", "debian_version", "ethertypes",
		"gai.conf", "host.conf", "inputrc", "issue", "issue.net", "ld.so.cache", "ld.so.conf",
		"locale.alias", "localtime", "login.defs", "magic", "magic.mime", "mime.types", "networks",
		"nsswitch.conf", "os-release", "protocols", "rpc", "services", "shells", "ssl/openssl.cnf",
		"timezone", "xattr.conf",
	}
	etcDirs = []string{
		"alternatives", "ld.so.conf.d", "profile.d", "python3", "python3.11", "skel", "ssl/certs", "terminfo",
	}
)

// baseDirs are the directories of a base root that are the pod's own (empty,
// writable through the container's layer), with their modes.
var baseDirs = []struct {
	path string
	mode fs.FileMode
}{
	{"dev", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"tmp", 0o1777}, {"run", 0o755},
	{"mnt", 0o755}, {"media", 0o755}, {"opt", 0o755}, {"srv", 0o755}, {"root", 0o700},
	{"home", 0o755}, {"var", 0o755}, {"var/tmp", 0o1777}, {"var/log", 0o755},
	{"var/lib", 0o755}, {"var/cache", 0o755}, {"etc", 0o755}, {"etc/ssl", 0o755},
}

// Users of the images: root, and ray (1000, group users 100) as in
// rayproject/ray, whose home is /home/ray.
const (
	rayUID, usersGID = 1000, 100
	etcPasswd        = "root:x:0:0:root:/root:/bin/bash\n" +
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" +
		"bin:x:2:2:bin:/bin:/usr/sbin/nologin\n" +
		"sys:x:3:3:sys:/dev:/usr/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" +
		"ray:x:1000:100::/home/ray:/bin/bash\n"
	etcGroup = "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\n" +
		"disk:x:6:\nstaff:x:50:\nusers:x:100:ray\nnogroup:x:65534:\n"
	pipConf = "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n"
)

// rootBase builds a pod's base root in dir: the pod's own directories, the
// symlinks of a merged /usr, /home/ray, generated passwd, group and
// pip.conf, and the etcFiles of hostRoot ("/" but in tests). Everything
// belongs to the pod's root (ids.host(0)), /home/ray to ray. It returns the
// directories to bind-mount read-only at the same place: those of
// systemDirs and etcDirs that are directories on the host.
func rootBase(dir, hostRoot string, ids idMap) ([]string, error) {
	b := baseBuilder{dir: dir, ids: ids}
	if err := b.mkdir(".", 0o755); err != nil {
		return nil, err
	}
	for _, d := range baseDirs {
		if err := b.mkdir(d.path, d.mode); err != nil {
			return nil, err
		}
	}
	binds, err := b.systemDirs(hostRoot)
	if err != nil {
		return nil, err
	}
	if err := b.home(); err != nil {
		return nil, err
	}
	for _, d := range etcDirs {
		if info, err := os.Stat(filepath.Join(hostRoot, "etc", d)); err == nil && info.IsDir() {
			binds = append(binds, "/etc/"+d)
		}
	}
	return binds, b.etc(hostRoot)
}

// baseBuilder writes one base root.
type baseBuilder struct {
	dir string
	ids idMap
}

func (b baseBuilder) mkdir(rel string, mode fs.FileMode) error {
	p := filepath.Join(b.dir, rel)
	if err := os.Mkdir(p, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Mkdir applies the umask and drops the sticky bit's meaning on some
	// file systems; Chmod sets the mode as asked.
	if err := os.Chmod(p, mode); err != nil {
		return err
	}
	return b.ids.chownToRoot(p)
}

// systemDirs copies the host's symlinks among systemDirs and returns its
// directories.
func (b baseBuilder) systemDirs(hostRoot string) ([]string, error) {
	var binds []string
	for _, d := range systemDirs {
		info, err := os.Lstat(filepath.Join(hostRoot, d))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		case info.Mode()&fs.ModeSymlink != 0:
			if err := b.copyEntry(filepath.Join(hostRoot, d), filepath.Join(b.dir, d)); err != nil {
				return nil, err
			}
		case info.IsDir():
			if err := b.mkdir(d, 0o755); err != nil {
				return nil, err
			}
			binds = append(binds, d)
		}
	}
	return binds, nil
}

func (b baseBuilder) home() error {
	p := filepath.Join(b.dir, "home", "ray")
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Lchown(p, b.ids.hostID(rayUID), b.ids.hostID(usersGID))
}

// etc writes the generated files and copies the allow-listed entries that
// exist on the host.
func (b baseBuilder) etc(hostRoot string) error {
	files := map[string]string{"passwd": etcPasswd, "group": etcGroup}
	if _, err := os.Stat(filepath.Join(hostRoot, "etc/ssl/certs/ca-certificates.crt")); err == nil {
		files["pip.conf"] = pipConf
	}
	for name, content := range files {
		p := filepath.Join(b.dir, "etc", name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		if err := b.ids.chownToRoot(p); err != nil {
			return err
		}
	}
	for _, rel := range etcFiles {
		src := filepath.Join(hostRoot, "etc", rel)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := b.copyEntry(src, filepath.Join(b.dir, "etc", rel)); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
	}
	return nil
}

// copyEntry copies one symlink or world-readable regular file (skipping
// anything else), owned by the pod's root.
func (b baseBuilder) copyEntry(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	mode := info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		err = copySymlink(src, dst)
	case mode.IsRegular() && mode.Perm()&0o004 != 0:
		err = copyFile(src, dst, mode.Perm())
	default:
		return nil
	}
	if err != nil {
		return err
	}
	return b.ids.chownToRoot(dst)
}

func copySymlink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	return os.Symlink(target, dst)
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}

// ImageUser is what the base root's /etc/passwd and /etc/group say of the
// user with uid, as a container runtime reads them from an image: the
// user's group (0 for a user they do not list) and the groups that name
// the user as a member.
func ImageUser(uid uint32) (gid uint32, groups []uint32) {
	name := ""
	for _, line := range strings.Split(strings.TrimSpace(etcPasswd), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 4 && f[2] == strconv.FormatUint(uint64(uid), 10) {
			name = f[0]
			if g, err := strconv.ParseUint(f[3], 10, 32); err == nil {
				gid = uint32(g)
			}
			break
		}
	}
	if name == "" {
		return 0, nil
	}
	for _, line := range strings.Split(strings.TrimSpace(etcGroup), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 || !slices.Contains(strings.Split(f[3], ","), name) {
			continue
		}
		if g, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			groups = append(groups, uint32(g))
		}
	}
	return gid, groups
}
