package lease

import (
	"crypto/rand"
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
type Writer struct {
	mu   sync.Mutex
	dir  string
	next uint64
}

// NewWriter prepares dir (which must exist and should be 0700) and writes the
// first lease value.
func NewWriter(dir string) (*Writer, error) {
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("lease: seed: %w", err)
	}
	w := &Writer{dir: dir, next: binary.BigEndian.Uint64(seed[:])}
	if err := w.Renew(); err != nil {
		return nil, err
	}
	return w, nil
}

// Path returns the lease file's path.
func (w *Writer) Path() string { return filepath.Join(w.dir, FileName) }

// Renew replaces the lease with a new value: write a temporary file in the
// same directory, fsync it, rename it over the lease, fsync the directory.
func (w *Writer) Renew() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	var value [Size]byte
	binary.BigEndian.PutUint64(value[:], w.next)
	return replace(w.dir, value[:])
}

func replace(dir string, value []byte) error {
	tmp, err := os.CreateTemp(dir, ".lease-*")
	if err != nil {
		return fmt.Errorf("lease: create temp: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("lease: chmod: %w", err)
	}
	if _, err := tmp.Write(value); err != nil {
		return fmt.Errorf("lease: write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("lease: fsync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lease: close: %w", err)
	}
	if err := os.Rename(name, filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("lease: rename: %w", err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
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
