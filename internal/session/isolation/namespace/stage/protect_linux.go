//go:build linux

package stage

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// protectKernel takes from the peer every way the shared /sys and the
// fresh /proc give to change the host's kernel: each mount under /sys
// (sysfs, the cgroup hierarchies: cgroup.kill, cgroup.procs of host
// processes) becomes read-only, /proc/sys and its siblings of
// confine.ReadonlyPaths too (core_pattern would run a program as full
// root), and confine.MaskedPaths are covered. A uid-0 peer without
// capabilities is still the owner of those root-owned files, so without
// this the file mode alone would let it write them.
func protectKernel() error {
	if err := readOnlyTree("/sys"); errors.Is(err, errNoSetattr) {
		err = remountEach("/sys", nil)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	for _, p := range confine.ReadonlyPaths {
		if err := bindReadOnly(p); err != nil {
			return err
		}
	}
	for _, p := range confine.MaskedPaths {
		if err := mask(p); err != nil {
			return err
		}
	}
	return nil
}

// errNoSetattr: the kernel has no mount_setattr (before 5.12), or dir
// is no mount's root; remountEach does the same, one mount at a time.
var errNoSetattr = errors.New("no recursive mount attributes")

// readOnlyTree makes the mount at dir and every mount below it
// read-only in one call, their other flags kept.
func readOnlyTree(dir string) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	err := unix.MountSetattr(unix.AT_FDCWD, dir, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &attr)
	switch {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return errNoSetattr
	case err != nil:
		return fmt.Errorf("make %s read-only: %w", dir, err)
	}
	return nil
}

// remountEach remounts each mount at dir or below it read-only, but
// those under skip.
func remountEach(dir string, skip []string) error {
	mps, err := mountPointsUnder(dir)
	if err != nil {
		return err
	}
	for _, m := range mps {
		if mounts.UnderAny(m, skip) {
			continue
		}
		if err := remountReadOnly(m); err != nil {
			return err
		}
	}
	return nil
}

// mountPointsUnder lists the mount points at dir or below it, from this
// namespace's mountinfo, parents before children.
func mountPointsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mounts.Under(mp, dir) && !seen[mp] {
			seen[mp] = true
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// remountReadOnly makes the mount at path read-only in this namespace
// only, keeping its other flags (setReadOnly); a path overmounted or
// gone is left: nothing the peer can reach there.
func remountReadOnly(path string) error {
	err := setReadOnly(path)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remount %s read-only: %w", path, err)
	}
	return nil
}

// setReadOnly makes the mount at path read-only, its other flags kept:
// one mount_setattr, which changes that flag alone. Before Linux 5.12, a
// remount with the flags statfs reports, since inside a user namespace
// the kernel refuses a remount that would clear a locked nosuid, nodev
// or noexec.
func setReadOnly(path string) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	err := unix.MountSetattr(unix.AT_FDCWD, path, 0, &attr)
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	return unix.Mount("", path, "", uintptr(unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY)|mountFlags(st.Flags), "")
}

// mountFlags maps statfs's ST_* bits to the MS_* bits a remount keeps.
func mountFlags(st int64) uintptr {
	var f uintptr
	for _, m := range []struct {
		st int64
		ms uintptr
	}{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st&m.st != 0 {
			f |= m.ms
		}
	}
	return f
}

// bindReadOnly binds path onto itself and makes that view read-only.
func bindReadOnly(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	return remountReadOnly(path)
}

// mask hides path: a directory under an empty read-only tmpfs, a file
// under /dev/null.
func mask(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		// Gone, or beyond a dir the stage cannot search: the peer, with
		// less than the stage's rights, cannot reach it either.
		return nil
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=0,mode=0555")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	return nil
}
