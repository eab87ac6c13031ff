package deadline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

const (
	controlSchema  = "loki-deadline-control/v1"
	controlMaxSize = 1024
)

// control is the file this process wrote about itself.
type control struct {
	path    string
	content []byte
	dev     uint64
	ino     uint64
}

// createControl writes {"schema","pid","identity"} for this process,
// exclusively and without following a symlink.
func createControl(path string) (*control, error) {
	self, err := procid.Capture(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("control file: own identity: %w", err)
	}
	content := controlRecord(self)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control file %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := f.Chmod(0o600); err != nil { // the umask must not loosen or tighten it
		return nil, fmt.Errorf("control file %s: %w", path, err)
	}
	if _, err := f.Write(content); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("control file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil || unix.Fstat(fd, &st) != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("control file %s: cannot be made durable", path)
	}
	return &control{path: path, content: content, dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

func controlRecord(id procid.Identity) []byte {
	tok, _ := json.Marshal(id.Token())
	return []byte(`{"schema":"` + controlSchema + `","pid":` + strconv.Itoa(id.PID()) + `,"identity":` + string(tok) + "}\n")
}

// remove deletes the file only if it is still the one we wrote.
func (c *control) remove() {
	var st unix.Stat_t
	if unix.Lstat(c.path, &st) != nil || uint64(st.Dev) != c.dev || uint64(st.Ino) != c.ino {
		return
	}
	b, err := os.ReadFile(c.path)
	if err != nil || !bytes.Equal(b, c.content) {
		return
	}
	_ = os.Remove(c.path)
}

// Cancel sends SIGTERM to the deadline process named by the control file at
// path, after proving the file is ours and untampered and that the identity
// still names that process. It returns the pid signalled.
func Cancel(path string) (int, error) {
	b, err := readControl(path)
	if err != nil {
		return 0, err
	}
	id, err := parseControl(b)
	if err != nil {
		return 0, err
	}
	if !lineage.Signal(id, unix.SIGTERM) {
		return 0, fmt.Errorf("%w: pid %d", ErrStale, id.PID())
	}
	return id.PID(), nil
}

// readControl opens without following symlinks and checks the open file
// itself (not just the name): regular, 0600, ours, one link, small.
func readControl(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symlink", ErrControl, path)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrControl, path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrControl, path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrControl, path)
	case st.Mode&0o7777 != 0o600:
		return nil, fmt.Errorf("%w: %s has mode %04o, want 0600", ErrControl, path, st.Mode&0o7777)
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("%w: %s is owned by uid %d", ErrControl, path, st.Uid)
	case st.Nlink != 1:
		return nil, fmt.Errorf("%w: %s has %d links", ErrControl, path, st.Nlink)
	case st.Size > controlMaxSize:
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrControl, path, controlMaxSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, controlMaxSize+1))
	if err != nil || len(b) > controlMaxSize {
		return nil, fmt.Errorf("%w: %s cannot be read within %d bytes", ErrControl, path, controlMaxSize)
	}
	return b, nil
}

// parseControl accepts exactly one object with exactly the keys schema,
// pid and identity (no duplicates, nothing after it).
func parseControl(b []byte) (procid.Identity, error) {
	bad := func(why string) (procid.Identity, error) {
		return procid.Identity{}, fmt.Errorf("%w: %s", ErrControl, why)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("not a JSON object")
	}
	seen := map[string]bool{}
	var schema, identity string
	var pid int
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok || seen[key] {
			return bad("malformed or duplicate key")
		}
		seen[key] = true
		val, err := dec.Token()
		if err != nil {
			return bad("malformed value")
		}
		switch key {
		case "schema":
			schema, _ = val.(string)
		case "identity":
			identity, _ = val.(string)
		case "pid":
			n, ok := val.(json.Number)
			p, err := strconv.Atoi(string(n))
			if !ok || err != nil || p <= 0 {
				return bad("pid is not a positive integer")
			}
			pid = p
		default:
			return bad("unexpected key " + strconv.Quote(key))
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return bad("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("trailing data")
	}
	if len(seen) != 3 || schema != controlSchema || identity == "" || pid == 0 {
		return bad("want exactly schema " + controlSchema + ", pid and identity")
	}
	id, err := procid.Restore(pid, identity)
	if err != nil {
		return bad("identity is not precise enough to authorise a signal")
	}
	return id, nil
}
