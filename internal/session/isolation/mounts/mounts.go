package mounts

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrInvalid reports a bind that cannot be given.
var ErrInvalid = errors.New("invalid mount")

// Bind is an extra host directory exposed in the container (e.g. the
// workspace).
type Bind struct {
	Source, Destination string
	ReadOnly            bool
}

// ParseBind parses SRC:DST[:ro|:rw].
func ParseBind(s string) (Bind, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Bind{}, fmt.Errorf("%w: --bind %q: want SRC:DST[:ro|:rw]", ErrInvalid, s)
	}
	b := Bind{Source: parts[0], Destination: parts[1]}
	if len(parts) == 3 {
		switch parts[2] {
		case "ro":
			b.ReadOnly = true
		case "rw":
		default:
			return Bind{}, fmt.Errorf("%w: --bind %q: mode must be ro or rw", ErrInvalid, s)
		}
	}
	if !filepath.IsAbs(b.Source) || !filepath.IsAbs(b.Destination) {
		return Bind{}, fmt.Errorf("%w: --bind %q: both paths must be absolute", ErrInvalid, s)
	}
	return b, nil
}

// ControlRootViews lists the container paths where the views (the rootfs
// at "/", binds) would show the host's control root: it holds every
// session's lease, and a peer that could write another session's lease
// could keep that session alive after its host stopped renewing, so each
// of those paths must be masked. A view whose source is inside the control
// root is refused (ErrInvalid): no mask could cover it. hiddenInRootfs are
// container paths the rootfs view does not show (the container's own
// tmpfs mounts).
func ControlRootViews(root string, views []Bind, hiddenInRootfs []string) ([]string, error) {
	root = realPath(root)
	var dests []string
	for _, v := range views {
		src := realPath(v.Source)
		if rel, ok := Within(src, root); ok && rel != "." {
			return nil, fmt.Errorf("%w: %s is inside the control root %s (other sessions' leases)", ErrInvalid, v.Source, root)
		}
		rel, ok := Within(root, src)
		if !ok {
			continue
		}
		dest := filepath.Join(v.Destination, rel)
		if v.Destination == "/" && UnderAny(dest, hiddenInRootfs) {
			continue
		}
		dests = append(dests, dest)
	}
	return dests, nil
}

// Within reports whether path is dir or below it, and path relative to
// dir (both are cleaned first).
func Within(path, dir string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// Under reports whether path is dir or below it; both must be absolute
// and clean (it compares the strings only: no allocation, no cleaning).
// boundary.Within answers the same for build confinement; a leaf both
// could import would be a 15th internal/ dir.
func Under(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// UnderAny reports whether path is under one of dirs (as Under).
func UnderAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if Under(path, d) {
			return true
		}
	}
	return false
}

// realPath resolves symlinks where the path exists, so that /var/run/loki
// and /run/loki are recognised as one directory.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
