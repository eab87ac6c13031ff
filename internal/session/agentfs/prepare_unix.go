//go:build unix

package agentfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrPrepare is a state path or placeholder that could not be made.
var ErrPrepare = errors.New("cannot prepare the agent's files")

// Prepare makes what the plan needs on the host before the session
// starts: each missing state path (dirs 0700; files 0600 holding "{}",
// the empty JSON object Claude Code reads ~/.claude.json as) and each
// missing protected path's placeholder (an empty dir 0700, or a file
// 0644: "{}" for JSON, else empty), owned by the owner of the dir they
// are made in (a supervisor run as root makes root's HOME root's). A
// placeholder is left in place afterwards: it means what none meant.
func (p *Plan) Prepare() error {
	for i, e := range p.State {
		if !e.Missing {
			continue
		}
		if err := create(e.Path, e.Dir, false); err != nil {
			return err
		}
		p.State[i].Missing = false
	}
	for i, e := range p.Protected {
		if !e.Missing || e.NoPlaceholder || e.OptIn {
			continue
		}
		if err := create(e.Path, e.Dir, true); err != nil {
			return err
		}
		p.Protected[i].Missing = false
	}
	return nil
}

func create(path string, dir, placeholder bool) error {
	parent := filepath.Dir(path)
	var st syscall.Stat_t
	if err := syscall.Stat(parent, &st); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPrepare, path, err)
	}
	if dir {
		if err := os.Mkdir(path, 0o700); err != nil && !os.IsExist(err) {
			return fmt.Errorf("%w: %v", ErrPrepare, err)
		}
	} else {
		// 0644: an empty placeholder holds no secret, and an oci
		// container's root in a private user namespace reads a host
		// file through its "other" bits (a file bind is not idmapped).
		mode := os.FileMode(0o644)
		if !placeholder {
			mode = 0o600
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if os.IsExist(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrPrepare, err)
		}
		if strings.HasSuffix(path, ".json") {
			_, err = f.WriteString("{}")
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrPrepare, err)
		}
	}
	if os.Geteuid() == 0 {
		if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("%w: %v", ErrPrepare, err)
		}
	}
	return nil
}
