//go:build linux

package pid1

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

func frame(body string) []byte {
	b := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	return append(b, body...)
}

// Every malformed prelude is refused with 125, at the stage the reference
// would refuse it, with one fixed line on stderr and none of the launch
// data (the env and argv carry a secret).
func TestMalformedPreludeIsRefused(t *testing.T) {
	t.Parallel()
	plain := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := `"env":{"LOKI_SECRET":"` + secret + `"}`
	argv := `"argv":["/bin/true","` + secret + `"]`
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, 1<<20+1)
	cases := []struct {
		name    string
		prelude []byte
		stage   string
		class   string
	}{
		{"zero-length", []byte{0, 0, 0, 0}, "launch-input", "launch-size"},
		{"over-1MiB", append(huge, `{"argv":["/bin/true"]}`...), "launch-input", "launch-size"},
		{"truncated-header", []byte{0, 0}, "launch-input", "launch-truncated"},
		{"truncated-body", frame(`{` + argv + `,"cwd":"/",` + env + `}`)[:30], "launch-input", "launch-truncated"},
		{"not-json", frame(`{"argv": [` + secret), "launch-input", "launch-syntax"},
		{"invalid-utf8", frame("{\"argv\":[\"/bin/true\"],\"cwd\":\"/\",\"env\":{\"K\":\"\xff" + secret + "\"}}"), "launch-input", "launch-syntax"},
		{"not-an-object", frame(`["/bin/true","` + secret + `"]`), "peer-spawn", "launch-type"},
		{"argv-not-list", frame(`{"argv":"/bin/true","cwd":"/",` + env + `}`), "peer-spawn", "launch-type"},
		{"env-not-object", frame(`{` + argv + `,"cwd":"/","env":["` + secret + `"]}`), "peer-spawn", "launch-type"},
		{"missing-cwd", frame(`{` + argv + `,` + env + `}`), "peer-spawn", "launch-type"},
		{"empty-argv", frame(`{"argv":[],"cwd":"/",` + env + `}`), "peer-spawn", "launch-empty-argv"},
		{"relative-cwd", frame(`{` + argv + `,"cwd":"tmp",` + env + `}`), "peer-spawn", "launch-relative-cwd"},
		{"missing-cwd-dir", frame(`{` + argv + `,"cwd":"/nonexistent-` + secret + `",` + env + `}`), "peer-spawn", "launch-cwd"},
		{"missing-executable", frame(`{"argv":["/nonexistent/` + secret + `"],"cwd":"/",` + env + `}`), "peer-spawn", "launch-not-executable"},
		{"not-on-path", frame(`{"argv":["` + secret + `"],"cwd":"/","env":{"PATH":"/usr/bin:/bin"}}`), "peer-spawn", "launch-not-executable"},
		{"not-executable", frame(`{"argv":["` + plain + `","` + secret + `"],"cwd":"/",` + env + `}`), "peer-spawn", "launch-not-executable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, pid1test.Config{Prelude: tc.prelude})
			r := s.Wait(waitShort)
			requireCode(t, r, 125)
			want := "ACP supervisor refused at " + tc.stage + ": " + tc.class + "\n"
			if string(r.Stderr) != want {
				t.Fatalf("stderr %q, want %q", r.Stderr, want)
			}
			requireNoSecret(t, r)
		})
	}
}

// The init reads exactly the prelude: bytes sent right behind it, in the
// same write, belong to the peer.
func TestPreludeConsumesNothingMore(t *testing.T) {
	t.Parallel()
	s := start(t, pid1test.Config{Spec: shell("cat"), Stdin: strings.NewReader("\x00\x00\x00\x05first-acp-bytes")})
	r := s.Wait(waitShort)
	requireCode(t, r, 0)
	if string(r.Stdout) != "\x00\x00\x00\x05first-acp-bytes" {
		t.Fatalf("peer got %q", r.Stdout)
	}
}

// A prelude that arrives in pieces, some before the first renewal and some
// after it, is read whole and exactly: the init reads what is there when
// the lease is first renewed and waits for the rest, and the bytes behind
// the prelude still belong to the peer.
func TestPreludeArrivingInPieces(t *testing.T) {
	t.Parallel()
	prelude, err := launch.Encode(*shell("cat"))
	if err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	s := start(t, pid1test.Config{Prelude: prelude[:2], Stdin: in})
	go func() {
		defer feed.Close()
		// The rest of the header and half the body once the init is past
		// its first renewal, the remainder and the peer's bytes later.
		if !testutil.WaitUntil(waitShort, func() bool { return s.Renewals() >= 2 }) {
			return
		}
		half := 4 + (len(prelude)-4)/2
		feed.Write(prelude[2:half])
		time.Sleep(200 * time.Millisecond) // the init must wait, not fail
		feed.Write(append(prelude[half:], "after-the-prelude"...))
	}()
	r := s.Wait(waitShort)
	requireCode(t, r, 0)
	if string(r.Stdout) != "after-the-prelude" {
		t.Fatalf("peer got %q", r.Stdout)
	}
}
