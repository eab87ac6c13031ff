//go:build linux

package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// makeMountPoints creates, as the host's root, the mount points of ms that
// the rootfs lacks: a runtime in a user namespace cannot create them in a
// rootfs owned by the host's root (without one it did so itself). Paths
// are resolved inside the rootfs, symlinks included, as the runtime
// resolves them, so nothing is made outside it. A destination inside an
// earlier mount (the container's own /dev and /tmp, a bind) is left to
// the runtime: it is not in the rootfs.
func makeMountPoints(rootfs string, ms []specs.Mount) error {
	root, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("rootfs %s: %w", rootfs, err)
	}
	defer unix.Close(root)
	var earlier []string
	for _, m := range ms {
		dst := filepath.Clean("/" + m.Destination)
		inside := mounts.UnderAny(dst, earlier)
		earlier = append(earlier, dst)
		if inside || dst == "/" {
			continue
		}
		file := false
		if m.Type == "bind" {
			st, err := os.Stat(m.Source)
			file = err == nil && !st.IsDir()
		}
		if err := makeMountPoint(root, strings.TrimPrefix(dst, "/"), file); err != nil {
			return fmt.Errorf("mount point %s in the rootfs %s: %w", dst, rootfs, err)
		}
	}
	return nil
}

// makeMountPoint makes rel (a dir, or an empty file when file is set)
// and its missing parents below root.
func makeMountPoint(root int, rel string, file bool) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		path := strings.Join(parts[:i+1], "/")
		fd, err := inRoot(root, path)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
		parent := root
		if i > 0 {
			if parent, err = inRoot(root, strings.Join(parts[:i], "/")); err != nil {
				return err
			}
		}
		err = makeEntry(parent, parts[i], file && i == len(parts)-1)
		if parent != root {
			unix.Close(parent)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// makeEntry makes name in dir, searchable (readable) by others whatever
// the umask: the namespace's root is "others" to it.
func makeEntry(dir int, name string, file bool) error {
	mode := uint32(0o755)
	if file {
		mode = 0o644
		fd, err := unix.Openat(dir, name, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, mode)
		if errors.Is(err, unix.EEXIST) {
			return nil
		}
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, mode)
	}
	if err := unix.Mkdirat(dir, name, mode); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil
		}
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

// inRoot opens path below root with root as "/": a symlink cannot lead
// out of it.
func inRoot(root int, path string) (int, error) {
	return unix.Openat2(root, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}
