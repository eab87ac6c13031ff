//go:build unix

package session

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
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

func (n named) Name() string                                { return string(n) }
func (n named) Capabilities() Capabilities                  { return Capabilities{} }
func (n named) Prepare(*launch.Spec, *confine.Policy) error { return nil }
func (n named) Start(Request) (Process, error)              { return nil, errors.New("not started") }
func withName(c Config, name string) Config                 { c.Backend = named(name); return c }

// preparing is a backend without init whose Prepare fills the cwd and
// names a user, as docker's does from an image; Start records what it
// was given.
type preparing struct {
	caps  Capabilities
	order []string
	got   Request
}

func (b *preparing) Name() string               { return "preparing" }
func (b *preparing) Capabilities() Capabilities { b.order = append(b.order, "caps"); return b.caps }
func (b *preparing) Prepare(peer *launch.Spec, p *confine.Policy) error {
	b.order = append(b.order, "prepare")
	peer.Cwd, peer.Env = "/", map[string]string{"FROM": "image"}
	p.User = &confine.User{UID: 7, GID: 7}
	return nil
}
func (b *preparing) Start(req Request) (Process, error) {
	b.order = append(b.order, "start")
	b.got = req
	return nil, errors.New("not started")
}

// TestPrepare: a refused policy never reaches Prepare (nothing is asked
// of the host); an admitted one is completed by Prepare before the peer
// is checked (its cwd was empty) and Start gets what Prepare made.
func TestPrepare(t *testing.T) {
	out, _ := os.CreateTemp(t.TempDir(), "out")
	defer out.Close()
	cfg := Config{Peer: launch.Spec{Argv: []string{"/bin/true"}}, Stdout: out, Stderr: out,
		Confine: confine.Policy{Hide: []string{"/h"}}}
	b := &preparing{caps: Capabilities{Knobs: map[confine.Knob]Support{confine.KnobUser: Given}}}
	cfg.Backend = b
	if code := exitcode.Code(Run(cfg)); code != exitcode.Code(exitcode.NotLaunched(nil)) || !slices.Equal(b.order, []string{"caps"}) {
		t.Fatalf("refused --hide: exit %d, calls %v: want 127 before Prepare", code, b.order)
	}
	b.order, cfg.Confine = nil, confine.Policy{}
	Run(cfg)
	if !slices.Equal(b.order, []string{"caps", "prepare", "start"}) {
		t.Fatalf("calls %v", b.order)
	}
	if b.got.Peer.Cwd != "/" || b.got.Peer.Env["FROM"] != "image" || b.got.Confine.User == nil || b.got.Confine.User.UID != 7 {
		t.Errorf("Start got peer %+v, policy %+v: not what Prepare made", b.got.Peer, b.got.Confine)
	}
}
