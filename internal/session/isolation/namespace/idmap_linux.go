//go:build linux

package namespace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
	"github.com/loki-sh/loki/internal/session/isolation/namespace/stage"
)

// A private user namespace (confine.UserNSPrivate) maps the peer's root
// to unprivileged host ids, so the host's files are not its own: root's
// show as nobody's, and only their "other" bits apply. The paths it must
// still use as before (the cwd and --write, writable; HOME, read-only: the
// agent's config) are idmapped mounts. Only the host's root can make one
// (the filesystem's superblock belongs to the initial user namespace), so
// the supervisor clones each tree, idmaps it by the stage's user
// namespace (ids inside show as the same ids on disk), and hands the
// detached mounts to the stage, which attaches them in its mount
// namespace.

// privateUserNS: the session gets a private user namespace. Without root
// it always has one (mapping the caller's own ids), which is not this.
func (b *Backend) privateUserNS(p confine.Policy) bool {
	return os.Geteuid() == 0 && p.PrivateUserNS()
}

// idmapTrees lists what the stage attaches idmapped, parents first: each
// writable path, and home, read-only, unless it is / or writable already.
func idmapTrees(write []string, home string) []stage.IDMapTree {
	var trees []stage.IDMapTree
	for _, w := range write {
		trees = append(trees, stage.IDMapTree{Path: w})
	}
	if home = homeDir(home); home != "" && !mounts.UnderAny(home, write) && unsearchable(home, nil) == "" {
		trees = append(trees, stage.IDMapTree{Path: home, RO: true})
	}
	sort.SliceStable(trees, func(i, j int) bool { return len(trees[i].Path) < len(trees[j].Path) })
	return trees
}

// homeDir is HOME resolved, "" unless it is an existing dir other than /.
func homeDir(home string) string {
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	home = filepath.Clean(home)
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() || home == "/" {
		return ""
	}
	return home
}

// unsearchable returns the first dir on the way to path that the peer
// could not search (it is "others" to every host dir), "" when none: a
// dir under /tmp or /run is the private dir's, and one under a tree is
// shown by that tree.
func unsearchable(path string, trees []stage.IDMapTree) string {
	private := confine.PrivateHostDirs()
	for d := filepath.Dir(path); d != "/" && !mounts.UnderAny(d, private); d = filepath.Dir(d) {
		covered := false
		for _, t := range trees {
			covered = covered || mounts.Under(d, t.Path)
		}
		var st unix.Stat_t
		if !covered && (unix.Stat(d, &st) != nil || st.Mode&0o001 == 0) {
			return d
		}
	}
	return ""
}

// checkReachable refuses a writable tree the peer could not reach.
func checkReachable(trees []stage.IDMapTree) error {
	for _, t := range trees {
		if d := unsearchable(t.Path, trees); d != "" && !t.RO {
			return confine.Refuse(Name, "a private user namespace with "+t.Path+" writable",
				d+" is not searchable by others (chmod o+x it), or use --userns host")
		}
	}
	return nil
}

// errIDMap is a tree the kernel would not idmap (an older kernel, or a
// filesystem without idmapped mounts).
var errIDMap = errors.New("idmapped mount refused")

// errStageGone: the stage exited before it took the trees (it failed and
// said why on the status pipe, or --init is not loki-init), which says
// nothing about idmapped mounts.
var errStageGone = errors.New("the stage exited before taking the idmapped mounts")

// sendTrees clones each tree (with the mounts below it), idmaps the clone
// by the user namespace of pid, and sends the detached mounts over sock,
// one per message, in order. The mounts are never attached on the host.
func sendTrees(sock *os.File, pid int, trees []stage.IDMapTree) error {
	ns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
		return errStageGone
	}
	if err != nil {
		return fmt.Errorf("user namespace of the stage: %w", err)
	}
	defer unix.Close(ns)
	for _, t := range trees {
		fd, err := unix.OpenTree(unix.AT_FDCWD, t.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("%w: clone %s: %v", errIDMap, t.Path, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns)}
		if t.RO {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
		if err == nil {
			err = unix.Sendmsg(int(sock.Fd()), []byte{'t'}, unix.UnixRights(fd), nil, 0)
			if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
				unix.Close(fd)
				return errStageGone
			}
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errIDMap, t.Path, err)
		}
	}
	return nil
}
