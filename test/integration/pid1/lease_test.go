//go:build linux

package pid1

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

// A lease that is never renewed after the init started (the only value
// predates it) launches nothing and ends with 124 within the window.
func TestLeaseNeverRenewed(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ran := filepath.Join(marks, "ran")
	s := start(t, pid1test.Config{NoRenew: true, Flags: []string{"-lease-duration", "2s"},
		Spec: shell("touch " + ran)})
	r := s.Wait(waitShort)
	requireCode(t, r, 124)
	if r.Elapsed < 2*time.Second || r.Elapsed > 2*time.Second+15*time.Second {
		t.Fatalf("expired after %v, want about 2s", r.Elapsed)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the peer ran under a lease that was never renewed")
	}
	if len(r.Stderr) != 0 {
		t.Fatalf("unexpected stderr %q", r.Stderr)
	}
}

// Renewals that stop mid-session end it with 124, a lease duration after
// the last one, and take the peer with them.
func TestLeaseStopsMidSession(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready := filepath.Join(marks, "ready")
	s := start(t, pid1test.Config{Flags: []string{"-lease-duration", "2s"}, RenewEvery: 200 * time.Millisecond,
		KeepStdinOpen: true, Spec: shell("echo $$ > " + ready + "; exec sleep 600")})
	waitFile(t, ready)
	pids := s.PIDs()
	last := s.StopRenewing()
	r := s.Wait(waitShort)
	requireCode(t, r, 124)
	after := time.Since(last)
	if after < 2*time.Second-100*time.Millisecond || after > 2*time.Second+15*time.Second {
		t.Fatalf("expired %v after the last renewal, want about 2s", after)
	}
	pid1test.RequirePIDsGone(t, s.Namespace(), pids, waitShort)
}

// The lease is enforced while the init waits for prelude bytes: a host that
// sends half a header and then dies must not hold the namespace.
func TestLeaseEnforcedDuringLaunchInput(t *testing.T) {
	t.Parallel()
	s := start(t, pid1test.Config{Flags: []string{"-lease-duration", "2s"}, Prelude: []byte{0, 0},
		KeepStdinOpen: true, RenewEvery: 200 * time.Millisecond})
	if !testutil.WaitUntil(waitShort, func() bool { return s.Renewals() >= 5 }) {
		t.Fatal("renewer did not run")
	}
	last := s.StopRenewing()
	r := s.Wait(waitShort)
	requireCode(t, r, 124)
	if after := time.Since(last); after < 2*time.Second-100*time.Millisecond {
		t.Fatalf("expired %v after the last renewal", after)
	}
}

// A long session with steady renewals (1 s cadence, 3 s lease) never
// expires falsely, with the control dir mounted read-only into the
// namespace as a directory, the way a runtime exposes it.
func TestLongSessionNeverExpiresFalsely(t *testing.T) {
	t.Parallel()
	control := t.TempDir()
	s := start(t, pid1test.Config{
		ControlDir:    control,
		Setup:         `mount --bind "$CONTROL" "$CONTROL"; mount -o remount,bind,ro "$CONTROL"`,
		Flags:         []string{"-lease-duration", "3s"},
		RenewEvery:    time.Second,
		KeepStdinOpen: true,
		Spec:          shell(`touch "$1/probe" 2>/dev/null && echo writable; sleep 12; echo done`, control),
	})
	r := s.Wait(waitLong)
	requireCode(t, r, 0)
	if string(r.Stdout) != "done\n" {
		t.Fatalf("stdout %q (the control dir must be read-only inside)", r.Stdout)
	}
	if r.Elapsed < 12*time.Second {
		t.Fatalf("ended after %v", r.Elapsed)
	}
}

// A host that renews by rewriting the lease in place sends no
// IN_MOVED_TO, the one notification the init watches: the guard's own
// checks must find those renewals (no false expiry over three windows),
// and a lapse after them must still end the session with 124, a lease
// duration after the last write plus at most the check lag. The guard
// never relies on notifications alone; this is the case that would
// expire at once if it did.
func TestRenewalsWithoutNotifications(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	ready := filepath.Join(marks, "ready")
	s := start(t, pid1test.Config{NoRenew: true, Flags: []string{"-lease-duration", "2s"},
		KeepStdinOpen: true, Spec: shell("echo $$ > " + ready + "; exec sleep 600")})
	path := filepath.Join(s.ControlDir(), lease.FileName)
	value := uint64(0x6c6f6b69)
	write := func() time.Time {
		value++
		var b [lease.Size]byte
		binary.BigEndian.PutUint64(b[:], value)
		if err := os.WriteFile(path, b[:], 0o600); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	var last time.Time
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); <-tick.C {
		last = write()
	}
	waitFile(t, ready) // the first in-place renewal opened launch input
	select {
	case <-s.Done():
		r := s.Wait(waitShort)
		t.Fatalf("ended while renewed in place: exit %d, stderr %q", r.Code, r.Stderr)
	default:
	}
	r := s.Wait(waitShort)
	requireCode(t, r, 124)
	after := time.Since(last)
	if after < 2*time.Second-100*time.Millisecond || after > 2*time.Second+15*time.Second {
		t.Fatalf("expired %v after the last in-place renewal, want about 2s", after)
	}
}
