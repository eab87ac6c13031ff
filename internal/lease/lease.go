package lease

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Size is the exact length of a valid lease value.
const Size = 8

// FileName is the lease file's name inside the control directory.
const FileName = "lease"

// Defaults shared by both sides of the protocol.
const (
	DefaultDuration = 5 * time.Second
	DefaultRenew    = 1 * time.Second
)

// ErrExpired reports that no renewal was observed within the lease duration.
var ErrExpired = errors.New("lease expired")

// Writer renews a lease by atomically replacing the lease file with a value
// different from the previous one. It is safe for concurrent use.
//
// A renewal either renames a staged value over the lease, or writes its
// value in full (temp file, fsync, rename) and stages the next one: a temp
// file already holding the next value, fsynced. Either way the value was
// on disk before it became visible, as Contract 1 asks, but a staged
// renewal waits for no disk flush. That matters most for the init's
// handshake: NewWriter stages a value before the init exists, so the
// renewal the init waits for at start-up is a bare rename, and no fsync
// (one stalls every other metadata update of the file system while the
// journal commits, the init's exec included; docs/session.md has the cost)
// runs while the session starts.
type Writer struct {
	mu     sync.Mutex
	dir    string
	next   uint64          // the last value renewed
	staged string          // a temp file holding next+1, fsynced; "" when none
	ready  <-chan struct{} // closed once NewWriter's staging is done
	group  int             // gid that may read the lease (0640), -1: none (0600)
}

// NewWriter prepares dir (which must exist and should be 0700), writes the
// first lease value (the init's baseline) and stages the first renewal.
func NewWriter(dir string) (*Writer, error) { return newWriter(dir, -1) }

// NewGroupWriter is NewWriter for an init that runs as another user (a
// session's --user): every lease file is 0640 with group gid, readable by
// that group and writable only by the caller.
func NewGroupWriter(dir string, gid int) (*Writer, error) { return newWriter(dir, gid) }

func newWriter(dir string, group int) (*Writer, error) {
	var seed [8]byte
	if err := randomSeed(seed[:]); err != nil {
		return nil, fmt.Errorf("lease: seed: %w", err)
	}
	w := &Writer{dir: dir, next: binary.BigEndian.Uint64(seed[:]), group: group}
	// The first value is only the init's baseline, never a renewal: it
	// needs no flush of its own. The first renewal is staged in the
	// background, while the caller starts the init (an init takes
	// milliseconds to read its baseline, about what the fsync takes).
	if err := w.replace(false); err != nil {
		return nil, err
	}
	staged := make(chan struct{})
	w.ready = staged
	go func() {
		defer close(staged)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.stage()
	}()
	return w, nil
}

// Path returns the lease file's path.
func (w *Writer) Path() string { return filepath.Join(w.dir, FileName) }

// Renew replaces the lease with a new value: the staged one when there is
// one, else a value written in full, after which the next is staged (a
// staging failure is not a renewal failure: the next Renew writes in
// full).
func (w *Writer) Renew() error {
	<-w.ready
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	if name := w.staged; name != "" {
		w.staged = ""
		if os.Rename(name, w.Path()) == nil {
			return nil
		}
		os.Remove(name) // gone or unusable: write the value in full
	}
	if err := w.replace(true); err != nil {
		return err
	}
	w.stage()
	return nil
}

// replace writes the current value to a temp file (fsynced when sync is
// set) and renames it over the lease.
func (w *Writer) replace(sync bool) error {
	name, err := writeTemp(w.dir, w.next, sync, w.group)
	if err != nil {
		return err
	}
	if err := os.Rename(name, w.Path()); err != nil {
		os.Remove(name)
		return fmt.Errorf("lease: rename: %w", err)
	}
	return nil
}

// stage writes the next value, fsynced, for the next Renew to rename.
func (w *Writer) stage() {
	if name, err := writeTemp(w.dir, w.next+1, true, w.group); err == nil {
		w.staged = name
	}
}

// Close removes the staged renewal. The lease itself stays: whether the
// init may go on is decided by renewals stopping, not by the file.
func (w *Writer) Close() error {
	<-w.ready
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.staged == "" {
		return nil
	}
	err := os.Remove(w.staged)
	w.staged = ""
	return err
}

// namedTemps makes writeTemp skip writeUnnamed (tests of the fallback).
var namedTemps bool

// writeTemp writes v to a new 0600 temporary file in dir (0640 of group
// when group >= 0), fsynced when sync is set. A value to fsync is written
// unnamed first where the system allows it (writeUnnamed): it is on disk
// before it has a name, and its fsync flushes no directory.
func writeTemp(dir string, v uint64, sync bool, group int) (string, error) {
	var value [Size]byte
	binary.BigEndian.PutUint64(value[:], v)
	if sync && !namedTemps {
		if name, ok, err := writeUnnamed(dir, value[:], group); ok {
			return name, err
		}
	}
	tmp, err := os.CreateTemp(dir, ".lease-*")
	if err != nil {
		return "", fmt.Errorf("lease: create temp: %w", err)
	}
	name := tmp.Name()
	err = fillTemp(tmp, value[:], sync, group)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("lease: close: %w", cerr)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func fillTemp(f *os.File, value []byte, sync bool, group int) error {
	mode := os.FileMode(0o600)
	if group >= 0 {
		if err := f.Chown(-1, group); err != nil {
			return fmt.Errorf("lease: chown: %w", err)
		}
		mode = 0o640
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("lease: chmod: %w", err)
	}
	if _, err := f.Write(value); err != nil {
		return fmt.Errorf("lease: write: %w", err)
	}
	if !sync {
		return nil
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("lease: fsync: %w", err)
	}
	return nil
}

// Watcher observes a lease file from inside the namespace. It is not safe
// for concurrent use: the init's supervision loop owns it.
type Watcher struct {
	path      string
	cpath     *byte // path for the system calls, made once
	duration  time.Duration
	last      [Size]byte
	haveLast  bool
	changedAt time.Time
	renewals  int
}

// NewWatcher starts watching path. The value present now is only a baseline:
// it is never counted as a renewal, so a stale lease left by a dead owner
// cannot satisfy the first-renewal requirement.
func NewWatcher(path string, duration time.Duration, now time.Time) *Watcher {
	w := &Watcher{path: path, duration: duration, changedAt: now}
	w.cpath, _ = bytePtr(path)
	if v, ok := w.read(); ok {
		w.last, w.haveLast = v, true
	}
	return w
}

// Observe reads the lease once and reports whether it was renewed.
func (w *Watcher) Observe(now time.Time) bool {
	v, ok := w.read()
	if !ok || (w.haveLast && v == w.last) {
		return false
	}
	w.last, w.haveLast = v, true
	w.changedAt = now
	w.renewals++
	return true
}

// read reads the lease without allocating (a path with a NUL byte is never
// a lease).
func (w *Watcher) read() ([Size]byte, bool) {
	if w.cpath == nil {
		return [Size]byte{}, false
	}
	return readPath(w.path, w.cpath)
}

// Renewals returns how many renewals were observed since NewWatcher.
func (w *Watcher) Renewals() int { return w.renewals }

// Deadline is the instant at which the lease expires unless renewed.
func (w *Watcher) Deadline() time.Time { return w.changedAt.Add(w.duration) }

// Check returns ErrExpired when no renewal was seen for the lease duration.
func (w *Watcher) Check(now time.Time) error {
	if now.Sub(w.changedAt) >= w.duration {
		return ErrExpired
	}
	return nil
}
