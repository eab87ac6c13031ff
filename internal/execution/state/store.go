//go:build unix

package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/loki-sh/loki/internal/safefile"
)

// SchemaVersion is written into every new record.
const SchemaVersion = 1

// File names inside an execution directory.
const (
	StateFile = "state.json"
	LogFile   = "runner.log"
	SpecFile  = "spec.md"
	ProofFile = "proof.json"
	// LineageFile holds the runner lineage's token (in every member's
	// environment), for reclaiming a run whose supervisor died. It is
	// beside state.json, whose fields are the reference's.
	LineageFile = "lineage.token"
	lockFile    = ".lock"
)

// State is one decoded state.json: field name to value, numbers kept as
// json.Number so that unknown fields survive a rewrite unchanged.
type State map[string]any

// Store is the root directory holding one directory per execution.
type Store struct{ root string }

// NewStore uses root (…/dashboard/builds) as given.
func NewStore(root string) *Store { return &Store{root: root} }

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// Dir is the directory of one execution.
func (s *Store) Dir(id ID) string { return filepath.Join(s.root, id.String()) }

// Path is a file inside the execution directory.
func (s *Store) Path(id ID, name string) string { return filepath.Join(s.Dir(id), name) }

func (s *Store) ensureDir(id ID) (string, error) {
	if !id.Valid() {
		return "", ErrInvalidID
	}
	dir := s.Dir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state: create execution dir: %w", err)
	}
	return dir, nil
}

// Read returns one complete snapshot without taking the lock: writers
// replace the file atomically, so there is nothing torn to see.
func (s *Store) Read(id ID) (State, error) {
	if !id.Valid() {
		return nil, ErrInvalidID
	}
	f, err := OpenRegular(s.Path(id, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("state: read %s: %w", id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("state: read %s: %w", id, err)
	}
	return Decode(b)
}

// OpenRegular opens a file of an execution for reading without following
// a final link and without blocking: a FIFO, socket or device planted at
// the name would otherwise hang the reader (and with it every list). Such
// a file, or a link, is ErrNotRegular.
func OpenRegular(path string) (*os.File, error) {
	f, err := safefile.OpenRegular(path)
	if errors.Is(err, safefile.ErrNotRegular) {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), ErrNotRegular)
	}
	return f, err
}

// Decode parses a state.json document; anything but a JSON object is
// ErrCorrupt.
func Decode(b []byte) (State, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrCorrupt)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, ErrCorrupt
	}
	return State(m), nil
}

// Update merges fields into the record under the lock and writes it back,
// creating the record (schema_version, execution_id) when there is none or
// it is unreadable, as the reference does. It returns the merged record.
func (s *Store) Update(id ID, fields map[string]any) (State, error) {
	norm, err := normalize(fields)
	if err != nil {
		return nil, err
	}
	return s.Mutate(id, func(st State, _ bool) error {
		for k, v := range norm {
			st[k] = v
		}
		return nil
	})
}

// Mutate runs fn on the current record under the exclusive lock; exists
// says whether a readable record was there. If fn returns an error nothing
// is written and the error is returned. Values fn stores must be plain JSON
// values (string, bool, nil, json.Number, numbers, []any, map[string]any).
func (s *Store) Mutate(id ID, fn func(st State, exists bool) error) (State, error) {
	dir, err := s.ensureDir(id)
	if err != nil {
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := s.Read(id)
	exists := err == nil
	if !exists {
		st = State{FieldSchemaVersion: SchemaVersion, FieldExecutionID: id.String()}
	}
	if err := fn(st, exists); err != nil {
		return nil, err
	}
	b, err := encode(st)
	if err != nil {
		return nil, err
	}
	removeDeadTemps(dir)
	if err := safefile.WriteAtomic(filepath.Join(dir, StateFile), b, 0o600); err != nil {
		return nil, err
	}
	return st, nil
}

// removeDeadTemps deletes temp files of state.json left by a writer killed
// mid-write (kill -9 between create and rename). Every writer holds the
// lock for the whole write, so under the lock no such file is live.
func removeDeadTemps(dir string) {
	left, _ := filepath.Glob(filepath.Join(dir, "."+StateFile+".*.tmp"))
	for _, p := range left {
		os.Remove(p)
	}
}

// normalize turns typed values (structs with json tags, typed slices) into
// the generic form Decode produces, so a record has one shape whether it
// was just written or read back.
func normalize(fields map[string]any) (map[string]any, error) {
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("state: encode fields: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("state: encode fields: %w", err)
	}
	return out, nil
}

// WriteSpec snapshots the spec the runner was given, 0600.
func (s *Store) WriteSpec(id ID, content []byte) error {
	dir, err := s.ensureDir(id)
	if err != nil {
		return err
	}
	return safefile.WriteAtomic(filepath.Join(dir, SpecFile), content, 0o600)
}

// OpenLog opens runner.log for appending, creating it 0600. O_APPEND makes
// every write land at the end, whoever else has it open. A link or
// anything but a regular file at that name is refused: following one would
// append to, and chmod, a file elsewhere.
func (s *Store) OpenLog(id ID) (*os.File, error) {
	dir, err := s.ensureDir(id)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("state: open runner log: %w", ErrNotRegular)
	}
	if err != nil {
		return nil, fmt.Errorf("state: open runner log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("state: open runner log: %w", ErrNotRegular)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("state: chmod runner log: %w", err)
	}
	return f, nil
}

// Entry is one execution found by List.
type Entry struct {
	ID    ID
	State State // nil when Err is set
	Err   error
}

// List returns every execution directory whose name is a canonical id,
// ordered by id. Unreadable records are listed with their error.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: list: %w", err)
	}
	var out []Entry
	for _, de := range des {
		id, err := ParseID(de.Name())
		if err != nil || id.String() != de.Name() || !de.IsDir() {
			continue
		}
		st, err := s.Read(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		out = append(out, Entry{ID: id, State: st, Err: err})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.s < out[j].ID.s })
	return out, nil
}

// resolve makes p absolute and resolves symlinks in the part of it that
// exists (Python's non-strict Path.resolve).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("state: resolve %s: %w", p, err)
	}
	var rest []string
	cur := abs
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// SnapshotSpec writes spec.md under the lock unless it exists already (a
// dashboard snapshots the spec before it starts the supervisor).
func (s *Store) SnapshotSpec(id ID, content []byte) error {
	dir, err := s.ensureDir(id)
	if err != nil {
		return err
	}
	unlock, err := lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(filepath.Join(dir, SpecFile)); err == nil {
		return nil
	}
	return safefile.WriteAtomic(filepath.Join(dir, SpecFile), content, 0o600)
}
