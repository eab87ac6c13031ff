//go:build linux

package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestOtherControlRoots: a running process whose last argument is a
// control dir (as a namespace session's init) names its root; one's own
// root is left out.
func TestOtherControlRoots(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	control := filepath.Join(other, "session-1", "control")
	if err := os.MkdirAll(control, 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "sleep 30", control)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	start := time.Now()
	got := OtherControlRoots(own)
	t.Logf("%d roots in %v", len(got), time.Since(start))
	if !slices.Contains(got, other) {
		t.Fatalf("OtherControlRoots = %v, want %s in it", got, other)
	}
	if slices.Contains(OtherControlRoots(other), other) {
		t.Fatalf("its own root %s is listed", other)
	}
}

// TestOtherControlRootsSupervisor: a running supervisor's --control-root
// (both spellings) and its XDG_RUNTIME_DIR name roots, read by the scan
// that skips kernel threads.
func TestOtherControlRootsSupervisor(t *testing.T) {
	dir := t.TempDir()
	var roots []string
	for _, n := range []string{"a", "b", "xdg/loki"} {
		r := filepath.Join(dir, n)
		if err := os.MkdirAll(r, 0o700); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
	}
	// sh stays the process (its command is not its last), with a
	// supervisor's argv.
	cmd := exec.Command("sh")
	cmd.Args = []string{filepath.Join(dir, "loki-supervise"), "-c", "sleep 30; :", "session", "--control-root", roots[0], "--control-root=" + roots[1], "--", "/bin/true"}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + filepath.Join(dir, "xdg")}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	got := OtherControlRoots(filepath.Join(dir, "own"))
	for _, r := range roots {
		if !slices.Contains(got, r) {
			t.Errorf("OtherControlRoots = %v, want %s in it", got, r)
		}
	}
}

// TestOtherControlRootsKernelThreads: the children of a pid 2 whose stat
// has PF_KTHREAD are not read; when pid 2 is a user process (a
// container's PID namespace) or its stat is unreadable, every process is.
// A fake procfs, with one "kernel thread" whose argv names a root.
func TestOtherControlRootsKernelThreads(t *testing.T) {
	const (
		kthreadd = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 26 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
		user     = "2 (sh) S 1 2 2 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 3371 2457600 221 18446744073709551615 1 1 0 0 0 0 0 0 65538 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	)
	dir := t.TempDir()
	hidden := filepath.Join(dir, "kthread-root")
	shown := filepath.Join(dir, "user-root")
	for _, r := range []string{hidden, shown} {
		if err := os.MkdirAll(filepath.Join(r, "session-1", "control"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, stat string
		skipped    bool
	}{
		{"kthreadd", kthreadd, true},
		{"user pid 2", user, false},
		{"no stat", "", false},
		{"torn stat", kthreadd[:30], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procfs := t.TempDir()
			files := map[string]string{
				"2/task/2/children": "5 7 ",
				"5/cmdline":         "x\x00" + filepath.Join(hidden, "session-1", "control") + "\x00",
				"7/cmdline":         "",
				"9/cmdline":         "y\x00" + filepath.Join(shown, "session-1", "control") + "\x00",
				"self/cmdline":      "z\x00/elsewhere/session-2/control\x00",
			}
			if tc.stat != "" {
				files["2/stat"] = tc.stat
			}
			for name, s := range files {
				p := filepath.Join(procfs, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got := otherControlRoots(filepath.Join(dir, "own"), procfs)
			if !slices.Contains(got, shown) {
				t.Errorf("roots %v: the user process's %s is missing", got, shown)
			}
			if slices.Contains(got, hidden) == tc.skipped {
				t.Errorf("roots %v: kernel thread's %s read = %v, want %v", got, hidden, !tc.skipped, !tc.skipped)
			}
		})
	}
}

// TestIsKernelThread: PF_KTHREAD in field 9, after a command name that
// may hold spaces and parentheses.
func TestIsKernelThread(t *testing.T) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stat string
		want bool
	}{
		{"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 26 0 0 18446744073709551615 0", true},
		{"2 (a) b) S 0 0 0 0 -1 2097152 0 0 0 0 0 1 0 0 20 0 1 0 26 0 0 1 0", true},
		{"2 (sh) S 1 2 2 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 3371 2457600 221 1 0", false},
		{"2 (kthreadd) S 0 0 0 0 -1 2129984", false}, // torn
		{"", false},
		{string(self), false},
	} {
		if got := isKernelThread([]byte(tc.stat)); got != tc.want {
			t.Errorf("isKernelThread(%q) = %v, want %v", tc.stat, got, tc.want)
		}
	}
}

func BenchmarkOtherControlRoots(b *testing.B) {
	own := b.TempDir()
	for b.Loop() {
		OtherControlRoots(own)
	}
}
