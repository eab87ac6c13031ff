//go:build unix

package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1/facts"
	"github.com/loki-sh/loki/internal/session/confine"
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

// sessionPrefix names every per-session directory; the sweep looks at
// nothing else.
const sessionPrefix = "session-"

// sessionDirs is a private directory for one session, the control dir
// inside it, and the backend's scratch dir beside it (made on demand).
type sessionDirs struct {
	parent  string // the control root: every session's dir is in it
	root    string // the per-session directory (removed at the end)
	control string // root/control: the directory exposed read-only
	scratch string // root/scratch: the backend's own files, if it has any
	gone    *controlGone
	swept   chan struct{} // closed once the stale sweep is over
}

// controlGone is the control dir's removal, started once (releaseControl).
type controlGone struct {
	once sync.Once
	done chan struct{} // closed once it is over
}

// makeSessionDirs creates this session's dir in parent, with its owner
// record written before anything else is put in it, and sweeps stale
// session dirs of dead owners from parent meanwhile: the sweep proves
// each dir's owner dead, as it does against other supervisors making
// theirs at the same time, so it leaves this one alone (no record yet,
// then a live owner), and it is off the start's path (a few µs with an
// empty root, tens per live sibling: its owner record, its process's
// stat). remove waits for it: a sweep cut short by the exit could leave
// a dir without its owner record, never swept again.
func makeSessionDirs(parent string) (sessionDirs, error) {
	if parent == "" {
		parent = DefaultControlRoot()
	}
	if !filepath.IsAbs(parent) {
		return sessionDirs{}, fmt.Errorf("%w: %s is not an absolute path", ErrControlDir, parent)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return sessionDirs{}, fmt.Errorf("%w: %w", ErrControlDir, err)
	}
	if err := checkPrivate(parent); err != nil {
		return sessionDirs{}, err
	}
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweepStale(parent)
	}()
	root, err := os.MkdirTemp(parent, sessionPrefix)
	if err != nil {
		<-swept
		return sessionDirs{}, fmt.Errorf("%w: %w", ErrControlDir, err)
	}
	d := sessionDirs{parent: parent, root: root, control: filepath.Join(root, "control"), scratch: filepath.Join(root, "scratch"),
		gone: &controlGone{done: make(chan struct{})}, swept: swept}
	if err := d.populate(); err != nil {
		d.remove()
		return sessionDirs{}, err
	}
	return d, nil
}

func (d sessionDirs) populate() error {
	if err := writeOwner(d.root); err != nil {
		return fmt.Errorf("%w: owner record: %w", ErrControlDir, err)
	}
	if err := os.Mkdir(d.control, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrControlDir, err)
	}
	return nil
}

// MakeScratch makes a session's scratch dir (Request.Scratch), private,
// unless it is there already. Only the backends that keep files of their
// own make it: on a disk filesystem every dir costs a block at the start
// and a block free at the end (~0.1 ms with discard, on the session's
// exit path).
func MakeScratch(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %w", ErrControlDir, err)
	}
	return nil
}

// releaseControl removes the control dir in the background, after first
// (nil: nothing), once: call it when nothing reads or writes there any
// more (renewals stopped, the init done with it). Where /run is a disk
// filesystem each removed dir and fsynced lease costs a block free (a
// discard, on a disk mounted with it): this way they overlap the rest of
// the session's end instead of adding to it.
func (d sessionDirs) releaseControl(first func() error) {
	d.gone.once.Do(func() {
		go func() {
			defer close(d.gone.done)
			if first != nil {
				first()
			}
			removeDir(d.control, lease.FileName, facts.Socket)
		}()
	})
}

// remove removes the session dir: the control dir (unless released
// already), the scratch dir if a backend made one, the owner record, and
// the dir itself last, with what a backend recorded beside the owner
// (the cgroups a stale sweep would remove). Called after the backend
// released what it recorded. In series: the block frees of one disk
// serialize anyway. It returns once the stale sweep is over too.
func (d sessionDirs) remove() {
	d.releaseControl(nil)
	removeDir(d.scratch)
	unix.Unlink(filepath.Join(d.root, ownerFile))
	<-d.gone.done
	removeDir(d.root, cgroupRecord) // the dir, and whatever else was made in it
	<-d.swept
}

// cgroupRecord is the cgroup package's record of a session's cgroups,
// beside its owner record: a name it changes only makes removeDir take
// the long way.
const cgroupRecord = "cgroups"

// removeDir removes dir, with the names a session knows it puts there
// first: an unlink each and an rmdir, where os.RemoveAll would try the
// dir as a file, open and list it (an 8 KiB buffer, two page faults)
// and remove each entry. Anything else there (a backend's file, a
// lease's temporary) leaves the dir non-empty, and os.RemoveAll removes
// the rest. A dir that is not there is left at that.
func removeDir(dir string, known ...string) {
	for _, name := range known {
		unix.Unlink(filepath.Join(dir, name))
	}
	if err := unix.Rmdir(dir); err != nil && err != unix.ENOENT {
		os.RemoveAll(dir)
	}
}

// newLeaseWriter starts the lease in the control dir. When the init runs
// with another host gid (gid >= 0: --user, or a private user namespace),
// that group may read the control dir and the lease (0750, 0640), and
// only the supervisor can write them: the init must read the lease, and
// the peer, which shares its ids, must never renew it (the dir is also
// mounted read-only for both).
func newLeaseWriter(d sessionDirs, gid int) (*lease.Writer, error) {
	if gid < 0 {
		return lease.NewWriter(d.control)
	}
	for _, dir := range []string{d.root, d.control} {
		if err := os.Chown(dir, -1, gid); err != nil {
			return nil, err
		}
		mode := os.FileMode(0o750)
		if dir == d.root {
			mode = 0o710 // traverse only: the scratch dir and owner record stay private
		}
		if err := os.Chmod(dir, mode); err != nil {
			return nil, err
		}
	}
	return lease.NewGroupWriter(d.control, gid)
}

// initGroup is the host gid the session's init runs with when the
// supervisor must give its control dir to it, else -1. Only root can give
// the dirs away; without it, a backend refuses a --user other than the
// caller, and a user namespace maps the caller's own ids.
func initGroup(p confine.Policy, c Capabilities) int {
	if os.Geteuid() != 0 {
		return -1
	}
	if u := p.User; u != nil {
		if int(u.GID) == os.Getegid() && int(u.UID) == os.Geteuid() {
			return -1
		}
		return int(u.GID)
	}
	if c.PrivateUserNS && p.PrivateUserNS() {
		return int(confine.PrivateRange().GID)
	}
	return -1
}
