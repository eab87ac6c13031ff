//go:build linux

package faults

// A session's peer must not reach any other session's control dir: found
// by this suite (every session's dir sits under one control root), fixed by
// masking the control root inside the namespace (internal/session/isolation/namespace).

import (
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// forgeScript renews every *other* session's lease under the same control
// root, as fast as it can.
const forgeScript = `ctl=$(tr '\0' '\n' </proc/1/cmdline | tail -n 1)
root=$(dirname "$(dirname "$ctl")")
echo FORGING
i=0
while :; do
  i=$((i+1))
  for l in "$root"/session-*/control/lease; do
    [ "$l" = "$ctl/lease" ] && continue
    { printf '%08d' $i > "$l"; } 2>/dev/null && echo FORGED
  done
  sleep 0.05
done`

// TestPeerCannotRenewAnotherSessionsLease: two sessions share a control
// root (as all root sessions share /run/loki). The peer of one must not be
// able to keep the other alive after that one's host stopped renewing:
// the lease of every session belongs to its own host alone.
func TestPeerCannotRenewAnotherSessionsLease(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	root := t.TempDir()
	victim := startSession(t, root, "/bin/sh", "-c", "echo ready; exec sleep 1000")
	if got := victim.next(t); got != "ready" {
		t.Fatalf("victim peer said %q", got)
	}
	forger := startSession(t, root, "/bin/sh", "-c", forgeScript)
	if got := forger.next(t); got != "FORGING" {
		t.Fatalf("forger peer said %q", got)
	}
	t.Cleanup(forger.kill) // first: it would keep the victim alive
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the forger wrote the victim's lease %d times", strings.Count(forger.rest(), "FORGED"))
		}
	})
	gone := victim.freezeHost(t)
	t.Logf("victim gone %v after its host stopped renewing", gone.Round(time.Millisecond))
	if code := victim.resume(t); code != 124 {
		t.Errorf("victim's supervisor exit %d, want 124", code)
	}
}
