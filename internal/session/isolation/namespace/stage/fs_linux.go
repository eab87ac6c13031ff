//go:build linux

package stage

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
)

// fsPlan is the confined filesystem of one session: the host's mounts
// read-only, writable only the paths in write, private dirs (/tmp,
// /run) and a minimal /dev, the host's sockets out of reach but those
// named, hide covered.
type fsPlan struct {
	write, read, hide []string
	// protect are read-only again inside the writable paths.
	protect []string
	// private are the dirs replaced by a tmpfs of the session's own
	// (PrivateDirs, resolved, each once, /tmp first); mask the host
	// sockets to cover; sockets the host sockets to show (--socket).
	private, mask, sockets []string
	// tmpSize caps /tmp and /dev/shm (bytes).
	tmpSize int64
	// host: --fs host, only hide applies.
	host bool
	// trees are idmapped mounts (idmap_linux.go) to attach at their
	// paths, in the order of treeOrder (parents first): each writable
	// path, then maybe HOME read-only.
	trees     map[string]int
	treeOrder []string
	// become, when set, switches to the ids of the stage's private user
	// namespace once host paths no longer need resolving.
	become func() error
}

// coveredBy returns the host dir the stage mounts anew (a private dir,
// the minimal /dev) that path is below, "" when none: a path the peer
// must keep below one is held before and shown again at its path inside
// the new mount.
func (p fsPlan) coveredBy(path string) string {
	for _, c := range append(p.private, "/dev") {
		if mounts.Under(path, c) {
			return c
		}
	}
	return ""
}

// held is a path kept for a covering mount: a detached mount to attach
// (tree: an idmapped tree, or the clone of a writable path) or a
// descriptor of the host's file to bind again (fd), read-only or not.
type held struct {
	path string
	fd   int
	tree bool
	ro   bool
}

// apply runs after / was made private and before /proc is mounted.
// Each writable path is cloned (with the mounts below it, their flags
// kept) before every mount of the host becomes read-only, and attached
// at its path after that; the idmapped trees too. Those under /tmp or
// /dev are held and attached into the new mount there.
func (p fsPlan) apply() error {
	if p.host {
		for _, h := range p.hide {
			if err := mask(h); err != nil {
				return err
			}
		}
		return p.becomeUser()
	}
	var kept, nodes []held
	clones := map[string]int{}
	defer func() {
		for _, h := range kept {
			if !h.tree {
				unix.Close(h.fd)
			}
		}
		closeAll(clones)
		for _, h := range nodes {
			unix.Close(h.fd)
		}
	}()
	if err := p.readOnlyHost(clones); err != nil {
		return err
	}
	// After the read-only pass, so that the nodes' binds are read-only
	// as every host mount (no chmod of the host's /dev/null).
	nodes, err := openDevNodes()
	if err != nil {
		return err
	}
	for _, t := range p.treeOrder {
		if p.coveredBy(t) != "" {
			kept = append(kept, held{path: t, fd: p.trees[t], tree: true})
			continue
		}
		if err := attachTree(p.trees[t], t); err != nil {
			return err
		}
	}
	for _, w := range p.write {
		fd, ok := clones[w]
		switch {
		case !ok:
			// an idmapped tree, or bound already (bindWritable)
			if _, tree := p.trees[w]; tree || p.coveredBy(w) == "" {
				continue
			}
			if fd, err = unix.Open(w, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
				return fmt.Errorf("open writable %s: %w", w, err)
			}
			kept = append(kept, held{path: w, fd: fd})
		case p.coveredBy(w) != "":
			kept = append(kept, held{path: w, fd: fd, tree: true})
		default:
			if err := attachTree(fd, w); err != nil {
				return err
			}
		}
	}
	for _, r := range p.read {
		if _, ok := p.trees[r]; ok || mounts.UnderAny(r, p.write) {
			continue // already reachable (and writable, under a --write)
		}
		fd, err := unix.Open(r, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", r, err)
		}
		kept = append(kept, held{path: r, fd: fd, ro: true})
	}
	for _, s := range p.sockets {
		if p.coveredBy(s) == "" {
			continue // not masked: the supervisor leaves it out of mask
		}
		fd, err := unix.Open(s, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("--socket %s: %w", s, err)
		}
		kept = append(kept, held{path: s, fd: fd})
	}
	// Parents first: a read-only HOME under /tmp, then the cwd in it.
	sort.SliceStable(kept, func(i, j int) bool { return len(kept[i].path) < len(kept[j].path) })
	// The host's sockets found at the start elsewhere (a read-only mount
	// does not stop connect(2)); those in private dirs go with them.
	for _, s := range p.mask {
		if p.coveredBy(s) != "" || mounts.UnderAny(s, p.write) {
			continue
		}
		if err := mask(s); err != nil {
			return err
		}
	}
	links := topLinks(p.private)
	if err := p.becomeUser(); err != nil {
		return err
	}
	for _, d := range p.private {
		if err := p.privateDir(d, links[d]); err != nil {
			return err
		}
		if err := p.showAgain(kept, d); err != nil {
			return err
		}
	}
	if err := minimalDev(nodes, p.tmpSize); err != nil {
		return err
	}
	if err := p.showAgain(kept, "/dev"); err != nil {
		return err
	}
	if err := unix.Mount("", "/dev", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("remount /dev read-only: %w", err)
	}
	for _, pr := range p.protect {
		if err := protectPath(pr); err != nil {
			return err
		}
	}
	for _, h := range p.hide {
		if err := mask(h); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyHost makes every mount of the host read-only but the writable
// paths (those not idmapped trees), which keep their flags, and those
// below them theirs. Each is cloned first, detached (clones, by path,
// for the caller to attach: the read-only pass does not reach a
// detached mount); then one mount_setattr makes the whole tree
// read-only. A kernel without these calls (before 5.2 and 5.12) gets
// the same from a bind of each writable path onto itself and a
// remount of every other mount, one by one.
func (p fsPlan) readOnlyHost(clones map[string]int) error {
	legacy := false
	for _, w := range p.write {
		if _, ok := p.trees[w]; ok {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, w, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOSYS) {
			legacy = true
			break
		}
		if err != nil {
			return fmt.Errorf("clone writable %s: %w", w, err)
		}
		clones[w] = fd
	}
	if !legacy {
		err := readOnlyTree("/")
		if !errors.Is(err, errNoSetattr) {
			return err
		}
	}
	// The legacy way: no writable path may be missing from the
	// namespace while every other mount is remounted.
	for _, w := range p.write {
		if _, ok := p.trees[w]; ok {
			continue
		}
		if fd, ok := clones[w]; ok {
			if err := attachTree(fd, w); err != nil {
				return err
			}
			unix.Close(fd)
			delete(clones, w)
			continue
		}
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind writable %s: %w", w, err)
		}
	}
	return remountEach("/", p.write)
}

// protectPath makes path, inside a writable mount, read-only: a bind of
// itself, made read-only. It must exist (the supervisor made a
// placeholder where it did not): a path left out would be one the peer
// may create, and the bind of a missing path fails.
func protectPath(path string) error {
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("protect %s: %w", path, err)
	}
	if err := setReadOnly(path); err != nil {
		return fmt.Errorf("protect %s: %w", path, err)
	}
	return nil
}

// showAgain mounts the kept paths below cover at their paths, in order.
func (p fsPlan) showAgain(kept []held, cover string) error {
	for _, h := range kept {
		if p.coveredBy(h.path) != cover {
			continue
		}
		if h.tree {
			if err := attachTree(h.fd, h.path); err != nil {
				return err
			}
			continue
		}
		if err := bindHeld(h.fd, h.path); err != nil {
			return err
		}
		if h.ro {
			if err := remountReadOnly(h.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// privateDir covers dir with an empty tmpfs: /tmp (1777, tmpSize) or a
// socket dir (0755, RunSize), with the host's top-level symlinks of a
// socket dir made again (NixOS keeps /run/current-system there: a link,
// not a socket).
func (p fsPlan) privateDir(dir string, links map[string]string) error {
	opts := "mode=0755,size=" + strconv.FormatInt(confine.RunSize, 10)
	if dir == "/tmp" {
		opts = "mode=1777,size=" + strconv.FormatInt(p.tmpSize, 10)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("private %s: %w", dir, err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("private %s: %w", dir, err)
		}
	}
	return nil
}

// topLinks reads the symlinks directly in each dir but /tmp (unreadable:
// none). The private /tmp starts empty: what the host keeps there is
// not the session's, and listing a busy /tmp cost each start more than
// every mount of the stage.
func topLinks(dirs []string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, d := range dirs {
		if d == "/tmp" {
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			if t, err := os.Readlink(filepath.Join(d, e.Name())); err == nil {
				if out[d] == nil {
					out[d] = map[string]string{}
				}
				out[d][e.Name()] = t
			}
		}
	}
	return out
}

func (p fsPlan) becomeUser() error {
	if p.become == nil {
		return nil
	}
	if err := p.become(); err != nil {
		return fmt.Errorf("become root of the user namespace: %w", err)
	}
	return nil
}

// bindHeld binds the file or dir behind fd at path, creating the mount
// point (in a tmpfs of ours) when missing.
func bindHeld(fd int, path string) error {
	if err := mountPoint(fd, path); err != nil {
		return err
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	return nil
}

// mountPoint makes path, as a dir or an empty file like what fd is, when
// it is missing (in a tmpfs of ours).
func mountPoint(fd int, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := mkdirAllMode(path, 0o755); err != nil {
			return fmt.Errorf("mount point %s: %w", path, err)
		}
	} else {
		if err := mkdirAllMode(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("mount point %s: %w", path, err)
		}
		if err := unix.Mknod(path, unix.S_IFREG|0o600, 0); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("mount point %s: %w", path, err)
		}
	}
	return nil
}

// devNodes are bound from the host's /dev into the minimal one (binding
// works in a user namespace, where mknod does not).
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// minimalDev replaces /dev by a tmpfs with the usual character devices
// (nodes: the host's, held before the tmpfs covered them), a devpts of
// its own (the host's terminals stay out of reach), /dev/shm and the fd
// symlinks. The caller remounts it read-only once what it keeps below
// /dev (a cwd in /dev/shm) is shown again.
func minimalDev(nodes []held, shmSize int64) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, h := range nodes {
		// The tmpfs is new: each mount point is made, none looked up.
		if err := unix.Mknod(h.path, unix.S_IFREG|0o600, 0); err != nil {
			return fmt.Errorf("mount point %s: %w", h.path, err)
		}
		var err error
		if h.tree {
			err = unix.MoveMount(h.fd, "", unix.AT_FDCWD, h.path, unix.MOVE_MOUNT_F_EMPTY_PATH)
		} else {
			err = unix.Mount("/proc/self/fd/"+strconv.Itoa(h.fd), h.path, "", unix.MS_BIND|unix.MS_REC, "")
		}
		if err != nil {
			return fmt.Errorf("bind %s: %w", h.path, err)
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	if err := unix.Mount("shm", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size="+strconv.FormatInt(shmSize, 10)); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for link, target := range map[string]string{
		"/dev/ptmx": "pts/ptmx", "/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	return nil
}

// openDevNodes holds the host's device nodes of devNodes: each a
// detached bind of it (open_tree), or where the kernel has none (before
// 5.2) a descriptor to bind from.
func openDevNodes() ([]held, error) {
	var nodes []held
	clone := true
	for _, name := range devNodes {
		h := held{path: "/dev/" + name, tree: clone}
		var err error
		if clone {
			h.fd, err = unix.OpenTree(unix.AT_FDCWD, h.path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
			if errors.Is(err, unix.ENOSYS) {
				clone, h.tree = false, false
			}
		}
		if !clone {
			h.fd, err = unix.Open(h.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENXIO) {
			continue
		}
		if err != nil {
			for _, h := range nodes {
				unix.Close(h.fd)
			}
			return nil, fmt.Errorf("open %s: %w", h.path, err)
		}
		nodes = append(nodes, h)
	}
	return nodes, nil
}
