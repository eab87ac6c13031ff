package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/lease"
)

// TestLeaseWriterGroup: the holder writes the lease 0600, or 0640 with
// the control dir's group when the dir is open to its group (an init
// that runs as another user, or in a user namespace, reads it so).
func TestLeaseWriterGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a dir another group needs root")
	}
	const gid = 1879048192
	for _, tc := range []struct {
		mode    os.FileMode
		group   int
		want    os.FileMode
		wantGID int
	}{
		{0o700, 0, 0o600, 0},
		{0o750, gid, 0o640, gid},
		{0o700, gid, 0o600, 0}, // the group has no access: it gets none
		{0o777, gid, 0o600, 0}, // another user's dir (a Pod's emptyDir): the holder runs as the init's user
	} {
		dir := t.TempDir()
		owner := -1
		if tc.mode == 0o777 {
			owner = 1000
		}
		if err := os.Chown(dir, owner, tc.group); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tc.mode); err != nil {
			t.Fatal(err)
		}
		w, err := newLeaseWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		fi, err := os.Stat(filepath.Join(dir, "lease"))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != tc.want || int(st.Gid) != tc.wantGID {
			t.Errorf("dir %v group %d: lease %v group %d, want %v group %d", tc.mode, tc.group, fi.Mode().Perm(), st.Gid, tc.want, tc.wantGID)
		}
	}
}

// TestHoldLeaseAwaitsOwner: with an await bound, a holder whose owner
// never says hello stops (124) after it; one that hears a byte renews
// until the owner's EOF (0).
func TestHoldLeaseAwaitsOwner(t *testing.T) {
	w, err := lease.NewWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	silent, hold := io.Pipe()
	defer hold.Close()
	start := time.Now()
	err = holdLease(w, 10*time.Millisecond, 200*time.Millisecond, silent)
	if !errors.Is(err, exitcode.ErrTimeout) || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("silent owner: %v after %v, want a timeout after 200ms", err, time.Since(start))
	}
	owner, say := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- holdLease(w, 10*time.Millisecond, 200*time.Millisecond, owner) }()
	say.Write([]byte("\n"))
	time.Sleep(400 * time.Millisecond) // past the await bound: the hello counted
	select {
	case err := <-done:
		t.Fatalf("holder stopped while its owner was there: %v", err)
	default:
	}
	say.Close()
	if err := <-done; err != nil {
		t.Fatalf("owner's EOF: %v, want nil", err)
	}
}
