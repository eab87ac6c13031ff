//go:build linux

package namespace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// agent's config; and, read-only, the dir above any of these that it
// could not search otherwise) are idmapped mounts. Only the host's root
// can make one (the filesystem's superblock belongs to the initial user
// namespace), so the supervisor clones each tree, idmaps it by the
// stage's user namespace (ids inside show as the same ids on disk), and
// hands the detached mounts to the stage, which attaches them in its
// mount namespace.

// privateUserNS: the session gets a private user namespace. Without root
// it always has one (mapping the caller's own ids), which is not this.
func (b *Backend) privateUserNS(p confine.Policy) bool {
	return os.Geteuid() == 0 && p.PrivateUserNS()
}

// idmapTrees lists what the stage attaches idmapped, parents first: each
// writable path; HOME read-only, unless it is / or shown already; and for
// each of these the topmost dir on its way the peer could not search
// (root's 0700 /root above a project in it, a team's 0700 /srv/team),
// read-only, so that the path is reached as root reaches it without a
// user namespace. What that dir holds besides is read-only to the peer,
// as the rest of HOME is. anew is what the stage makes anew (anewDirs).
func idmapTrees(write []string, home string, anew []string) []stage.IDMapTree {
	var trees []stage.IDMapTree
	for _, w := range write {
		trees = append(trees, stage.IDMapTree{Path: w})
	}
	for _, w := range write {
		trees = withBlocker(trees, w, anew)
	}
	if home = homeDir(home); home != "" && !underTree(home, trees) {
		switch t := withBlocker(trees, home, anew); {
		case unsearchable(home, t, anew) != "":
			// Another user's dir on the way: HOME stays out of reach.
		case underTree(home, t):
			trees = t
		default:
			trees = append(t, stage.IDMapTree{Path: home, RO: true})
		}
	}
	sort.SliceStable(trees, func(i, j int) bool { return len(trees[i].Path) < len(trees[j].Path) })
	return trees
}

// withBlocker adds to trees, read-only, the topmost dir on the way to
// path that the peer could not search, when there is one.
func withBlocker(trees []stage.IDMapTree, path string, anew []string) []stage.IDMapTree {
	top := ""
	for d := path; ; {
		if d = unsearchable(d, trees, anew); d == "" {
			break
		}
		top = d
	}
	if top == "" || underTree(top, trees) {
		return trees
	}
	return append(trees, stage.IDMapTree{Path: top, RO: true})
}

// underTree: path is shown by one of trees.
func underTree(path string, trees []stage.IDMapTree) bool {
	for _, t := range trees {
		if mounts.Under(path, t.Path) {
			return true
		}
	}
	return false
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

// anewDirs are the dirs the stage makes anew, searchable: the private
// ones (privateDirs, confine.PrivateHostDirs) and /dev.
func anewDirs(privateDirs []string) []string {
	return append(slices.Clip(privateDirs), "/dev")
}

// unsearchable returns the nearest dir above path that the peer could
// not search, "" when none. A dir under anew (/tmp, /run, /dev) is made
// anew by the stage (searchable); one a tree shows has its real owner,
// and the peer is root (0:0) there; any other is the host's, to which
// the peer is "others".
func unsearchable(path string, trees []stage.IDMapTree, anew []string) string {
	for d := filepath.Dir(path); d != "/" && !mounts.UnderAny(d, anew); d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil {
			return d
		}
		ok := st.Mode&0o001 != 0
		if underTree(d, trees) {
			ok = searchable(st, confine.User{})
		}
		if !ok {
			return d
		}
	}
	return ""
}

// checkReachable refuses a writable tree the peer could not reach even
// through the trees: a dir on its way that is another user's and closed
// to others (root without capabilities is refused it on the host too).
func checkReachable(trees []stage.IDMapTree, anew []string) error {
	for _, t := range trees {
		if d := unsearchable(t.Path, trees, anew); d != "" && !t.RO {
			return confine.Refuse(Name, "a private user namespace with "+t.Path+" writable",
				d+" is another user's and closed to the session's root, which has no capabilities: run loki-supervise as its owner, or chmod o+x it")
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
