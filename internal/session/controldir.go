package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultControlRoot is where private session directories are made:
// /run/loki for root, $XDG_RUNTIME_DIR/loki or $TMPDIR/loki-<uid> otherwise.
// None of these is inside a workspace the agent is given.
func DefaultControlRoot() string {
	if os.Geteuid() == 0 {
		return "/run/loki"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "loki")
	}
	return filepath.Join(os.TempDir(), "loki-"+strconv.Itoa(os.Geteuid()))
}

// sessionDirs is a private directory for one session and the control dir
// inside it.
type sessionDirs struct {
	root    string // the per-session directory (removed at the end)
	control string // root/control: the directory exposed read-only
}

func makeSessionDirs(parent string) (sessionDirs, error) {
	if parent == "" {
		parent = DefaultControlRoot()
	}
	if !filepath.IsAbs(parent) {
		return sessionDirs{}, fmt.Errorf("%w: %s is not an absolute path", ErrControlDir, parent)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return sessionDirs{}, fmt.Errorf("%w: %v", ErrControlDir, err)
	}
	if err := checkPrivate(parent); err != nil {
		return sessionDirs{}, err
	}
	root, err := os.MkdirTemp(parent, "session-")
	if err != nil {
		return sessionDirs{}, fmt.Errorf("%w: %v", ErrControlDir, err)
	}
	control := filepath.Join(root, "control")
	if err := os.Mkdir(control, 0o700); err != nil {
		os.RemoveAll(root)
		return sessionDirs{}, fmt.Errorf("%w: %v", ErrControlDir, err)
	}
	return sessionDirs{root: root, control: control}, nil
}

func (d sessionDirs) remove() { os.RemoveAll(d.root) }
