//go:build linux

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRecordNotRegular: a FIFO, a socket-like special file or a symlink
// planted at state.json (or a FIFO at runner.log) never hangs a reader.
// status, logs and stop answer with one line and exit 1; list shows the
// record as unreadable and still lists the good one next to it.
func TestRecordNotRegular(t *testing.T) {
	const good = "f0000000-0000-4000-8000-0000000000a0"
	cases := []struct {
		name  string
		plant func(t *testing.T, dir string)
	}{
		{"fifo", func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "state.json")) }},
		{"symlink", func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "elsewhere.json")
			if err := os.WriteFile(target, []byte(`{"state":"running"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, "state.json")); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink-to-fifo", func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "fifo")
			mkfifo(t, target)
			if err := os.Symlink(target, filepath.Join(dir, "state.json")); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "state.json"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			env := baseEnv(data)
			if o := cli(t, env, "run", "--execution-id", good, "--workspace", t.TempDir(), "--", "/bin/true"); o.code != 0 {
				t.Fatalf("run: exit %d, stderr %q", o.code, o.stderr)
			}
			bad := "f0000000-0000-4000-8000-00000000010" + itoa(i)
			dir := filepath.Join(data, "dashboard", "builds", bad)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, dir)
			for _, cmd := range []string{"status", "logs", "stop"} {
				o := cli(t, env, cmd, bad) // cli fails the test if it hangs
				if o.code != 1 {
					t.Errorf("%s: exit %d, want 1; stdout %q stderr %q", cmd, o.code, o.stdout, o.stderr)
				}
				requireNoCrash(t, o.stderr)
				requireOneLine(t, o.stderr, "not a regular file")
			}
			l := cli(t, env, "list")
			if l.code != 0 || !strings.Contains(l.stdout, bad+"  unreadable") || !strings.Contains(l.stdout, good) {
				t.Fatalf("list: exit %d, stdout %q, stderr %q", l.code, l.stdout, l.stderr)
			}
			if j := cli(t, env, "list", "--json"); j.code != 0 || !strings.Contains(j.stdout, "not a regular file") {
				t.Fatalf("list --json: exit %d, stdout %q, stderr %q", j.code, j.stdout, j.stderr)
			}
		})
	}
}

// TestRunnerLogFIFO: a FIFO at runner.log of a finished execution makes
// logs refuse with one line instead of waiting for a writer forever.
func TestRunnerLogFIFO(t *testing.T) {
	data := t.TempDir()
	env := baseEnv(data)
	id := "f0000000-0000-4000-8000-0000000000b0"
	if o := cli(t, env, "run", "--execution-id", id, "--workspace", t.TempDir(), "--", "/bin/true"); o.code != 0 {
		t.Fatalf("run: exit %d, stderr %q", o.code, o.stderr)
	}
	log := filepath.Join(data, "dashboard", "builds", id, "runner.log")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, log)
	o := cli(t, env, "logs", id)
	if o.code != 1 {
		t.Fatalf("logs: exit %d, want 1; stderr %q", o.code, o.stderr)
	}
	requireNoCrash(t, o.stderr)
	requireOneLine(t, o.stderr, "not a regular file")
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatalf("mkfifo %s: %v", p, err)
	}
}
