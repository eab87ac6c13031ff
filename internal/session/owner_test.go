package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// deadIdentity returns the identity of a process that has exited and been
// reaped, captured while it was alive.
func deadIdentity(t *testing.T) procid.Identity {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := procid.Capture(cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil {
		t.Skipf("no precise identities here: %v", err)
	}
	return id
}

// TestSweepStale: only a session dir whose recorded owner is proven dead is
// removed; every kind of doubt keeps it.
func TestSweepStale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("birth tokens of dead processes are checked through /proc")
	}
	self, err := procid.Capture(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dead := deadIdentity(t)
	ns := pidNamespace()
	record := func(o owner) []byte { b, _ := json.Marshal(o); return b }
	cases := []struct {
		name   string
		owner  []byte // nil: no record at all
		prefix string
		swept  bool
	}{
		{"dead owner", record(owner{dead.PID(), dead.Token(), ns}), sessionPrefix, true},
		{"live owner (this test)", record(owner{self.PID(), self.Token(), ns}), sessionPrefix, false},
		{"pid alive, other birth token: reused pid", record(owner{self.PID(), "proc:" + "other-boot" + ":1", ns}), sessionPrefix, true},
		{"another PID namespace", record(owner{dead.PID(), dead.Token(), "pid:[1]"}), sessionPrefix, false},
		{"imprecise token", record(owner{dead.PID(), "ps:Mon Jan 1", ns}), sessionPrefix, false},
		{"no record", nil, sessionPrefix, false},
		{"torn record", []byte(`{"pid":`), sessionPrefix, false},
		{"unknown field", []byte(`{"pid":1,"token":"x","pidns":"","extra":1}`), sessionPrefix, false},
		{"not a session dir", record(owner{dead.PID(), dead.Token(), ns}), "other-", false},
	}
	parent := t.TempDir()
	dirs := map[string]string{}
	for _, tc := range cases {
		dir, err := os.MkdirTemp(parent, tc.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if tc.owner != nil {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), tc.owner, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		os.Mkdir(filepath.Join(dir, "control"), 0o700)
		dirs[tc.name] = dir
	}
	sweepStale(parent)
	for _, tc := range cases {
		_, err := os.Stat(dirs[tc.name])
		if gone := os.IsNotExist(err); gone != tc.swept {
			t.Errorf("%s: swept=%v, want %v", tc.name, gone, tc.swept)
		}
	}
}

// TestSweepLeavesForeignDirs: a session dir that is not private to us (a
// link, or writable by others) is never touched, whatever its record says.
func TestSweepLeavesForeignDirs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("birth tokens of dead processes are checked through /proc")
	}
	dead := deadIdentity(t)
	b, _ := json.Marshal(owner{dead.PID(), dead.Token(), pidNamespace()})
	parent, elsewhere := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, ownerFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, sessionPrefix+"link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(parent, sessionPrefix+"open")
	os.Mkdir(open, 0o700)
	os.WriteFile(filepath.Join(open, ownerFile), b, 0o600)
	os.Chmod(open, 0o777)
	sweepStale(parent)
	for _, p := range []string{link, elsewhere, open} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestSessionDirsCarryOwner: a new session dir records this process, and
// the sweep of the next session leaves it alone.
func TestSessionDirsCarryOwner(t *testing.T) {
	parent := t.TempDir()
	d, err := makeSessionDirs(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer d.remove()
	for _, p := range []string{d.root, d.control} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want a 0700 dir", p, st.Mode(), err)
		}
	}
	// Scratch only once a backend asks for it.
	if _, err := os.Stat(d.scratch); !os.IsNotExist(err) {
		t.Fatalf("scratch made before it was asked for: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := MakeScratch(d.scratch); err != nil {
			t.Fatalf("MakeScratch, call %d: %v", i+1, err)
		}
	}
	if st, err := os.Stat(d.scratch); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("scratch: %v %v, want a 0700 dir", st.Mode(), err)
	}
	if runtime.GOOS == "linux" {
		o, err := readOwner(d.root)
		if err != nil || o.PID != os.Getpid() {
			t.Fatalf("owner record %+v, %v", o, err)
		}
		if st, _ := os.Stat(filepath.Join(d.root, ownerFile)); st.Mode().Perm() != 0o600 {
			t.Fatalf("owner record mode %v", st.Mode())
		}
	}
	d2, err := makeSessionDirs(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.remove()
	<-d2.swept
	if _, err := os.Stat(d.root); err != nil {
		t.Fatalf("a live session's dir was swept: %v", err)
	}
}

// TestSessionDirsSweepDone: the sweep runs beside a new session's start,
// and is over once the session's dir is removed: a dead owner's dir is
// gone by then.
func TestSessionDirsSweepDone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("birth tokens of dead processes are checked through /proc")
	}
	dead := deadIdentity(t)
	parent := t.TempDir()
	stale := filepath.Join(parent, sessionPrefix+"stale")
	b, _ := json.Marshal(owner{dead.PID(), dead.Token(), pidNamespace()})
	if err := os.MkdirAll(filepath.Join(stale, "control"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, ownerFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := makeSessionDirs(parent)
	if err != nil {
		t.Fatal(err)
	}
	d.remove()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead owner's dir is left: %v", err)
	}
}

// TestSessionDirsRemoved: the session dir goes whole, whether its control
// dir was released early (first runs before it goes) or not, and whether
// it holds only the names a session puts there (removed one by one) or
// others too (the long way).
func TestSessionDirsRemoved(t *testing.T) {
	for _, tc := range []struct{ early, others bool }{{true, true}, {false, true}, {true, false}, {false, false}} {
		early := tc.early
		d, err := makeSessionDirs(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		files := []string{filepath.Join(d.control, "lease"), filepath.Join(d.control, "facts"), filepath.Join(d.root, "cgroups")}
		if tc.others {
			if err := MakeScratch(d.scratch); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(d.root, "other"), 0o700); err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.Join(d.control, ".lease-1"), filepath.Join(d.scratch, "cgroups"), filepath.Join(d.root, "other", "x"))
		}
		for _, f := range files {
			if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if early {
			ran := false
			d.releaseControl(func() error { ran = true; return nil })
			<-d.gone.done
			if _, err := os.Stat(d.control); !ran || !os.IsNotExist(err) {
				t.Fatalf("released: first ran %v, control dir: %v", ran, err)
			}
			if _, err := os.Stat(filepath.Join(d.root, "cgroups")); err != nil {
				t.Fatalf("the release took the cgroups record too: %v", err)
			}
		}
		d.remove()
		if _, err := os.Stat(d.root); !os.IsNotExist(err) {
			t.Fatalf("%+v: session dir left: %v", tc, err)
		}
	}
}

// FuzzOwnerMarshal: the hand-written record is encoding/json's, byte for
// byte, for any pid and strings (an older or newer supervisor's sweep
// reads it with encoding/json).
func FuzzOwnerMarshal(f *testing.F) {
	f.Add(4242, "proc:0b5e1c4e-8d8a-4c1e-9a51-3a0a6c7e2f10:123456", "pid:[4026531836]")
	f.Add(-1, "ps:Mon Jan  1 <&>", "\x00\"\\\u2028\xff")
	f.Add(0, "", "")
	f.Fuzz(func(t *testing.T, pid int, token, ns string) {
		o := owner{PID: pid, Token: token, PIDNS: ns}
		want, err := json.Marshal(o)
		got, err2 := o.marshal()
		if string(got) != string(want) || (err == nil) != (err2 == nil) {
			t.Fatalf("%+v: %s, %v; encoding/json: %s, %v", o, got, err2, want, err)
		}
	})
}
