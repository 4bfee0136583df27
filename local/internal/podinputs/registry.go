package podinputs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

// RegistryImage is the image ref runs as, from img, an image of the node's
// image store: its config's Entrypoint, Cmd, Env and WorkingDir, and its
// USER resolved as a container runtime resolves it (a uid, or a name looked
// up in the image's /etc/passwd; a group likewise in its /etc/group).
func RegistryImage(ref string, img imagestore.Image) (Image, error) {
	cfg := img.Config
	out := Image{
		Ref:        ref,
		Local:      "image " + img.Digest.String() + " of the node's image store",
		Entrypoint: slices.Clone(cfg.Entrypoint),
		Cmd:        slices.Clone(cfg.Cmd),
		Env:        slices.Clone(cfg.Env),
		WorkingDir: cfg.WorkingDir,
		Registry:   true,
		RootFS:     img.RootFS,
	}
	if !slices.ContainsFunc(out.Env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		// As containerd: an image without PATH gets the default one.
		out.Env = append(out.Env, "PATH="+systemPath)
	}
	user, group, _ := strings.Cut(cfg.User, ":")
	uid, err := resolveID(img.RootFS, "passwd", user)
	if err != nil {
		return Image{}, fmt.Errorf("image %s: user %q: %w", ref, cfg.User, err)
	}
	out.UID = uid
	if group != "" {
		gid, err := resolveID(img.RootFS, "group", group)
		if err != nil {
			return Image{}, fmt.Errorf("image %s: group of user %q: %w", ref, cfg.User, err)
		}
		out.GID = &gid
	}
	return out, nil
}

// resolveID returns the id of name in the image's /etc/<file> (passwd or
// group); a number is the id itself, "" is root's.
func resolveID(rootfs, file, name string) (int64, error) {
	if name == "" {
		return 0, nil
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return id, nil
	}
	for _, f := range etcEntries(rootfs, file) {
		if f[0] == name {
			return strconv.ParseInt(f[2], 10, 64)
		}
	}
	return 0, fmt.Errorf("no matching entries in the image's /etc/%s", file)
}

// RootFSUser is what an image's /etc/passwd and /etc/group say of uid: its
// group (0 when passwd does not list it) and the groups that name it as a
// member, as a container runtime reads them.
func RootFSUser(rootfs string, uid uint32) (gid uint32, groups []uint32) {
	name := ""
	for _, f := range etcEntries(rootfs, "passwd") {
		if f[2] == strconv.FormatUint(uint64(uid), 10) {
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
	for _, f := range etcEntries(rootfs, "group") {
		if !slices.Contains(strings.Split(f[3], ","), name) {
			continue
		}
		if g, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			groups = append(groups, uint32(g))
		}
	}
	return gid, groups
}

// etcEntries are the lines of the image's /etc/<file> with at least four
// colon-separated fields; none when it has no such file. The file is read
// inside the image's root: a symlink in the image cannot point the node at
// a host file.
func etcEntries(rootfs, file string) [][]string {
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return nil
	}
	defer root.Close()
	data, err := root.ReadFile(filepath.Join("etc", file))
	if err != nil {
		return nil
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Split(sc.Text(), ":"); len(f) >= 4 {
			out = append(out, f)
		}
	}
	return out
}
