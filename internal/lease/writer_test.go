package lease

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func temps(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".lease-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stagedWriter is a Writer on dir whose first renewal is staged.
func stagedWriter(t *testing.T, dir string) *Writer {
	t.Helper()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	<-w.ready // the first renewal is staged in the background
	t.Cleanup(func() { w.Close() })
	return w
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// A renewal renames the staged value, fsynced before, over the lease; one
// that found nothing staged writes in full and stages the next. So the
// first renewal after NewWriter (the one an init's handshake waits for) is
// a bare rename, and no value becomes visible before it was on disk.
func TestRenewRenamesTheStagedValue(t *testing.T) {
	bothTemps(t, testRenewRenamesTheStagedValue)
}

// bothTemps runs test with fsynced values written unnamed first
// (O_TMPFILE, where the system has it) and as named temp files.
func bothTemps(t *testing.T, test func(*testing.T)) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "unnamed", true: "named"}[named], func(t *testing.T) {
			namedTemps = named
			t.Cleanup(func() { namedTemps = false })
			test(t)
		})
	}
}

func testRenewRenamesTheStagedValue(t *testing.T) {
	dir := t.TempDir()
	w := stagedWriter(t, dir)
	prev, _ := os.ReadFile(w.Path())
	seen := map[string]bool{string(prev): true}
	for i := 0; i < 6; i++ {
		staged := temps(t, dir)
		if want := 1 - i%2; len(staged) != want {
			t.Fatalf("renewal %d: staged files %v, want %d", i, staged, want)
		}
		var ino uint64
		var next []byte
		if len(staged) == 1 {
			var err error
			next, err = os.ReadFile(staged[0])
			if err != nil || len(next) != Size {
				t.Fatalf("staged value %x (%v)", next, err)
			}
			if st, _ := os.Stat(staged[0]); st.Mode().Perm() != 0o600 {
				t.Fatalf("staged file mode %v", st.Mode())
			}
			ino = inode(t, staged[0])
		}
		if err := w.Renew(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(w.Path())
		if len(got) != Size || seen[string(got)] {
			t.Fatalf("renewal %d: lease %x repeats a value", i, got)
		}
		seen[string(got)] = true
		if next != nil && (!bytes.Equal(got, next) || inode(t, w.Path()) != ino) {
			t.Fatalf("renewal %d did not rename the staged file", i)
		}
	}
}

// A staged file that vanished (a cleaned directory) or cannot be renamed
// costs nothing but the fast path: the renewal is written in full.
func TestRenewSurvivesALostStagedFile(t *testing.T) {
	bothTemps(t, testRenewSurvivesALostStagedFile)
}

func testRenewSurvivesALostStagedFile(t *testing.T) {
	dir := t.TempDir()
	w := stagedWriter(t, dir)
	before, _ := os.ReadFile(w.Path())
	for _, p := range temps(t, dir) {
		os.Remove(p)
	}
	if err := w.Renew(); err != nil {
		t.Fatalf("renew without its staged file: %v", err)
	}
	after, _ := os.ReadFile(w.Path())
	if len(after) != Size || bytes.Equal(before, after) {
		t.Fatalf("lease %x then %x: not renewed", before, after)
	}
	if n := len(temps(t, dir)); n != 1 {
		t.Fatalf("%d staged files after a full renewal, want 1", n)
	}
}

// Close leaves the lease and nothing else.
func TestCloseRemovesTheStagedFile(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	<-w.ready // the first renewal is staged in the background
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != FileName {
		t.Fatalf("dir holds %v, want only the lease", names)
	}
}

// TestGroupWriter: every lease file (the first, staged and fully written
// renewals) is 0640 of the given group; NewWriter's stay 0600.
func TestGroupWriter(t *testing.T) { bothTemps(t, testGroupWriter) }

func testGroupWriter(t *testing.T) {
	gid := os.Getegid() // a group we may always chown to
	for _, tc := range []struct {
		name  string
		new   func(string) (*Writer, error)
		mode  os.FileMode
		group int
	}{
		{"private", NewWriter, 0o600, -1},
		{"group", func(d string) (*Writer, error) { return NewGroupWriter(d, gid) }, 0o640, gid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := tc.new(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			check := func(when string) {
				st, err := os.Stat(w.Path())
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != tc.mode {
					t.Errorf("%s: mode %v, want %v", when, st.Mode().Perm(), tc.mode)
				}
				if g := int(st.Sys().(*syscall.Stat_t).Gid); tc.group >= 0 && g != tc.group {
					t.Errorf("%s: group %d, want %d", when, g, tc.group)
				}
			}
			check("first value")
			for i := 0; i < 3; i++ { // staged renewals, then full ones once no stage is left
				if err := w.Renew(); err != nil {
					t.Fatal(err)
				}
				check("renewal")
			}
		})
	}
}
