package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/testutil"
)

// TestCleanStaleTrustsNoRecord: a stale record may name only cgroups of
// that session: a dir outside a cgroup filesystem, or a cgroup with
// another name, is left alone; the session's own is removed.
func TestCleanStaleTrustsNoRecord(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.Version() == "none" {
		t.Skipf("no cgroups: %v", err)
	}
	session := filepath.Join(t.TempDir(), "session-test"+strings.TrimPrefix(filepath.Base(t.TempDir()), "Test"))
	scratch := filepath.Join(session, "scratch")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	own, err := host.Create(Name(scratch), confine.Resources{PidsMax: 64})
	if err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	defer own.Remove()
	other, err := host.Create(Name(scratch)+"-other", confine.Resources{PidsMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Remove()
	notCgroup := filepath.Join(t.TempDir(), Name(scratch))
	if err := os.Mkdir(notCgroup, 0o755); err != nil {
		t.Fatal(err)
	}
	record := append(append([]string{notCgroup}, other.Dirs()...), own.Dirs()...)
	if err := os.WriteFile(filepath.Join(scratch, recordFile), []byte(strings.Join(record, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	CleanStale(scratch)
	for _, d := range own.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the session's own cgroup %s was not removed: %v", d, err)
		}
	}
	for _, d := range append(other.Dirs(), notCgroup) {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s, named in the record but not the session's cgroup, was touched: %v", d, err)
		}
	}
}

// TestSweepEmpty: an empty session cgroup older than staleAge is removed;
// a fresh empty one (a session between Create and Add) and an old one
// with a process in it are kept.
func TestSweepEmpty(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.Version() == "none" {
		t.Skipf("no cgroups: %v", err)
	}
	base := "loki-session-sweeptest" + strings.TrimPrefix(filepath.Base(t.TempDir()), "TestSweepEmpty")
	mk := func(suffix string) *Cgroup {
		c, err := host.Create(base+suffix, confine.Resources{PidsMax: 64})
		if err != nil {
			t.Skipf("cannot make a cgroup here: %v", err)
		}
		t.Cleanup(func() { c.Remove() })
		return c
	}
	old, fresh, busy := mk("-old"), mk("-fresh"), mk("-busy")
	past := time.Now().Add(-2 * staleAge)
	for _, c := range []*Cgroup{old, busy} {
		for _, d := range c.Dirs() {
			if err := os.Chtimes(d, past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if err := busy.Add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	host.SweepEmpty()
	for _, d := range old.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("old empty cgroup %s kept: %v", d, err)
		}
	}
	for _, d := range append(fresh.Dirs(), busy.Dirs()...) {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

// TestRecordBesideOwner: Record writes into the session dir, so a
// session without files of its own needs no scratch dir, and CleanStale
// reads it there, or in scratch where an older supervisor wrote it.
func TestRecordBesideOwner(t *testing.T) {
	testutil.RequireRoot(t)
	host, err := Detect()
	if err != nil || host.Version() == "none" {
		t.Skipf("no cgroups: %v", err)
	}
	for _, old := range []bool{false, true} {
		session := filepath.Join(t.TempDir(), "session-record"+strconv.FormatBool(old))
		scratch := filepath.Join(session, "scratch")
		if err := os.Mkdir(session, 0o700); err != nil {
			t.Fatal(err)
		}
		c, err := host.Create(Name(scratch), confine.Resources{PidsMax: 64})
		if err != nil {
			t.Skipf("cannot make a cgroup here: %v", err)
		}
		defer c.Remove()
		if err := c.Record(scratch); err != nil {
			t.Fatalf("Record without a scratch dir: %v", err)
		}
		if _, err := os.Stat(scratch); !os.IsNotExist(err) {
			t.Fatalf("Record made the scratch dir: %v", err)
		}
		if old {
			os.Mkdir(scratch, 0o700)
			if err := os.Rename(filepath.Join(session, recordFile), filepath.Join(scratch, recordFile)); err != nil {
				t.Fatal(err)
			}
		}
		CleanStale(scratch)
		for _, d := range c.Dirs() {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("old layout %v: the recorded cgroup %s was not removed: %v", old, d, err)
			}
		}
	}
}

// TestSweepOncePerStaleAge: a session start sweeps when its control root
// has no fresh marker, then marks it; within staleAge the next start does
// not sweep (an empty stale cgroup waits), after it it does again.
func TestSweepOncePerStaleAge(t *testing.T) {
	host, err := Detect()
	if err != nil || len(host.sweepParents()) == 0 {
		t.Fatalf("no cgroup hierarchy to sweep here (%v, %v)", err, host.sweepParents())
	}
	root := t.TempDir()
	scratch := filepath.Join(root, "session-x", "scratch")
	marker := sweepMarker(scratch, host)
	if filepath.Dir(marker) != root || !strings.HasPrefix(filepath.Base(marker), "cgroup-sweep-") {
		t.Fatalf("marker %s: want cgroup-sweep-* in the control root %s", marker, root)
	}
	if !sweepDue(marker) {
		t.Fatal("no marker: the sweep must be due")
	}
	touch(marker)
	fi, err := os.Lstat(marker)
	if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Fatalf("marker %v, %v: want a 0600 file", fi, err)
	}
	if sweepDue(marker) {
		t.Fatal("a fresh marker: the sweep must wait")
	}
	old := time.Now().Add(-staleAge - time.Second)
	if err := os.Chtimes(marker, old, old); err != nil {
		t.Fatal(err)
	}
	if !sweepDue(marker) {
		t.Fatal("a marker older than staleAge: the sweep must be due")
	}
	touch(marker)
	if sweepDue(marker) {
		t.Fatal("touch must make an old marker fresh")
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(marker, future, future)
	if !sweepDue(marker) {
		t.Fatal("a marker from the future (clock set back): the sweep must be due")
	}
	os.Remove(marker)
	if err := os.Symlink("/etc/hostname", marker); err != nil {
		t.Fatal(err)
	}
	if !sweepDue(marker) {
		t.Fatal("a symlink is no marker")
	}
}
