//go:build unix

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// ownerFile is the record, in every session dir, of the supervisor that
// made it: the proof the sweep needs before it may delete the dir.
const ownerFile = "owner"

// maxOwner bounds what the sweep reads of an owner record.
const maxOwner = 4096

// owner is who made a session dir: pid and birth token (internal/proc/procid),
// and the PID namespace those are valid in.
type owner struct {
	PID   int    `json:"pid"`
	Token string `json:"token"`
	PIDNS string `json:"pidns"`
}

// writeOwner records this process as the owner of dir. It is written to a
// temporary name and renamed, so a reader never sees half a record; a dir
// without a complete record is never swept.
func writeOwner(dir string) error {
	self, err := ownIdentity()
	if err != nil {
		// No precise identity here (no procfs): write no record, and the
		// dir is simply never swept.
		return nil
	}
	b, err := self.marshal()
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+ownerFile)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ownerFile))
}

// marshal is json.Marshal(o), byte for byte, written by hand when the
// strings need no escaping (a token and a namespace link always do): the
// first json.Marshal of a process builds encoding/json's caches, 30 µs
// of the session's start, and the supervisor has no other JSON to write
// before the stage's clone.
func (o owner) marshal() ([]byte, error) {
	if !plainJSON(o.Token) || !plainJSON(o.PIDNS) {
		return json.Marshal(o)
	}
	b := make([]byte, 0, 32+len(o.Token)+len(o.PIDNS))
	b = append(b, `{"pid":`...)
	b = strconv.AppendInt(b, int64(o.PID), 10)
	b = append(b, `,"token":"`...)
	b = append(b, o.Token...)
	b = append(b, `","pidns":"`...)
	b = append(b, o.PIDNS...)
	return append(b, `"}`...), nil
}

// plainJSON reports whether encoding/json writes s as it is between its
// quotes: printable ASCII without the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// ownIdentity is this process's owner record, read once: the sweep and
// the record of the new dir both need it, and it never changes.
var ownIdentity = sync.OnceValues(func() (owner, error) {
	self, err := procid.Capture(os.Getpid())
	if err != nil {
		return owner{}, err
	}
	return owner{PID: self.PID(), Token: self.Token(), PIDNS: pidNamespace()}, nil
})

// readOwner reads dir's owner record: a regular file, not a link, small.
func readOwner(dir string) (owner, error) {
	f, err := openNoFollow(filepath.Join(dir, ownerFile))
	if err != nil {
		return owner{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxOwner {
		return owner{}, errors.New("owner record is not a small regular file")
	}
	var o owner
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return owner{}, fmt.Errorf("owner record: %w", err)
	}
	return o, nil
}

// StaleCleaner releases what a backend left outside a stale session dir
// (e.g. an OCI runtime's container state) before the dir is removed. It is
// given the dir's scratch path (which may not exist) and must treat the
// contents of the session dir as untrusted.
type StaleCleaner func(scratch string)

var (
	cleanersMu sync.Mutex
	cleaners   []StaleCleaner
)

// OnStale registers a cleaner; loki-supervise registers each backend's
// before it runs a command.
func OnStale(c StaleCleaner) {
	cleanersMu.Lock()
	defer cleanersMu.Unlock()
	cleaners = append(cleaners, c)
}

func cleanStale(dir string) {
	cleanersMu.Lock()
	cs := append([]StaleCleaner(nil), cleaners...)
	cleanersMu.Unlock()
	for _, c := range cs {
		c(filepath.Join(dir, "scratch"))
	}
}

// sweepStale removes the session dirs under parent whose owner is proven
// dead. Anything short of proof (no record, a torn or foreign record,
// another PID namespace, an owner that may be alive, or no way to check
// identities here at all) leaves the dir alone. Errors are ignored: the
// sweep is housekeeping, never a reason to refuse a session.
func sweepStale(parent string) {
	self, err := ownIdentity()
	if err != nil {
		return // identities cannot be checked: nothing can be proven dead
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	ns := self.PIDNS
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), sessionPrefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if stale(dir, ns) {
			cleanStale(dir)
			os.RemoveAll(dir)
		}
	}
}

// stale reports whether dir is a private session dir of ours whose owner
// is dead.
func stale(dir, ns string) bool {
	if checkPrivate(dir) != nil {
		return false
	}
	o, err := readOwner(dir)
	if err != nil || o.PIDNS != ns {
		return false
	}
	id, err := procid.Restore(o.PID, o.Token)
	if err != nil {
		return false
	}
	return ownerDead(id)
}

// ownerDead is true only on evidence: the pid is gone, is a zombie, or now
// carries another precise birth token (a reused pid, or another boot).
func ownerDead(id procid.Identity) bool {
	tok, err := procid.BirthToken(id.PID())
	if err != nil {
		return errors.Is(err, procid.ErrGone)
	}
	if tok != id.Token() {
		return procid.SignalSafe(tok)
	}
	st, err := procid.Stat(id.PID())
	return err == nil && (st.State == 'Z' || st.State == 'X')
}
