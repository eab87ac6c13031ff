package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
	} {
		dir := t.TempDir()
		if err := os.Chown(dir, -1, tc.group); err != nil {
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
