//go:build unix

package session

import (
	"errors"
	"testing"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session/confine"
)

// TestAdmitUndeclared: a knob the backend does not declare is refused,
// never ignored; the first refused knob in order is the one named.
func TestAdmitUndeclared(t *testing.T) {
	caps := Capabilities{Knobs: map[confine.Knob]Support{confine.KnobUser: Given}}
	if err := Admit("x", caps, confine.Policy{User: &confine.User{UID: 1, GID: 1}}, false); err != nil {
		t.Fatalf("declared knob refused: %v", err)
	}
	err := Admit("x", caps, confine.Policy{Hide: []string{"/h"}}, false)
	want := "confinement not available: --isolation x cannot give --hide; this backend does not declare it; use --isolation namespace"
	if err == nil || err.Error() != want || !errors.Is(err, confine.ErrUnsupported) {
		t.Fatalf("undeclared knob: %v, want %q", err, want)
	}
	if err := Admit("x", caps, confine.Policy{}, true); err == nil || !errors.Is(err, confine.ErrUnsupported) {
		t.Fatalf("undeclared --tty: %v, want refused", err)
	}
	caps.Knobs[confine.KnobHide] = Refused("fix one")
	caps.Knobs[confine.KnobWrite] = Refused("fix two")
	err = Admit("x", caps, confine.Policy{Write: []string{"/w"}, Hide: []string{"/h"}}, false)
	if err == nil || err.Error() != "confinement not available: --isolation x cannot give --write; fix two" {
		t.Fatalf("two refused knobs: %v, want the first in order", err)
	}
}

// TestAdmitExitCodes: a policy at odds with itself is a usage error (2),
// checked before the backend's knobs; a knob refused exits 127.
func TestAdmitExitCodes(t *testing.T) {
	caps := Capabilities{Knobs: map[confine.Knob]Support{}}
	bad := Config{Backend: nil, Confine: confine.Policy{FS: confine.FSHost, Write: []string{"/w"}}}
	if code := exitcode.Code(admit(withName(bad, "x"), caps)); code != exitcode.Code(exitcode.Usage(nil)) {
		t.Errorf("--fs host --write: exit %d, want usage", code)
	}
	refused := Config{Confine: confine.Policy{Hide: []string{"/h"}}}
	if code := exitcode.Code(admit(withName(refused, "x"), caps)); code != exitcode.Code(exitcode.NotLaunched(nil)) {
		t.Errorf("undeclared --hide: exit %d, want 127", code)
	}
}

type named string

func (n named) Name() string                   { return string(n) }
func (n named) Capabilities() Capabilities     { return Capabilities{} }
func (n named) Start(Request) (Process, error) { return nil, errors.New("not started") }
func withName(c Config, name string) Config    { c.Backend = named(name); return c }
