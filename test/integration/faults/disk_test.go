//go:build linux

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// A record-write failure is the supervisor's own failure: exit 125
// ("refused or failed"), never a code the runner could have produced
// through a clean exit path, and never 0.
const recordFailed = 125

// requireRefused checks what a command the data dir refused said: exit
// want, no crash, one line naming cause.
func requireRefused(t *testing.T, what string, o outcome, want int, cause string) {
	t.Helper()
	if o.code != want {
		t.Fatalf("%s: exit %d, want %d; stderr %q", what, o.code, want, o.stderr)
	}
	requireNoCrash(t, o.stderr)
	requireOneLine(t, o.stderr, cause)
}

// requireRunRefused runs a runner that only touches a marker and checks
// that run refused it (recordFailed, naming cause) before it could start.
func requireRunRefused(t *testing.T, env []string, cause string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ran")
	o := cli(t, env, "run", "--workspace", t.TempDir(), "--", "/bin/sh", "-c", "touch "+marker)
	requireRefused(t, "run", o, recordFailed, cause)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the runner ran although nothing could be recorded")
	}
}

// TestDiskFullBeforeStart: with no space left in LOKI_DATA_DIR, run refuses
// before the runner starts, says why in one line and leaves no record
// and no temp file.
func TestDiskFullBeforeStart(t *testing.T) {
	requireMountNS(t)
	disk := mountTmpfs(t, 256<<10)
	fill(t, disk)
	data := filepath.Join(disk, "data")
	requireRunRefused(t, baseEnv(data), "no space left on device")
	requireNotTorn(t, data)
	if l := cli(t, baseEnv(data), "list"); l.code != 0 || strings.Contains(l.stdout, "running") {
		t.Fatalf("list on a full disk: exit %d, stdout %q, stderr %q", l.code, l.stdout, l.stderr)
	}
}

// TestDiskFullDuringRun: the runner fills the disk through runner.log, so
// its exit cannot be recorded. The supervisor says so and exits 125; the
// record keeps its last complete version (running), which status then
// shows as "supervisor lost", not as a live execution.
func TestDiskFullDuringRun(t *testing.T) {
	requireMountNS(t)
	disk := mountTmpfs(t, 1<<20)
	data := filepath.Join(disk, "data")
	id := "f0000000-0000-4000-8000-000000000001"
	o := cli(t, baseEnv(data), "run", "--execution-id", id, "--workspace", t.TempDir(), "--",
		"/bin/sh", "-c", "head -c 8388608 /dev/zero; exit 3")
	requireRefused(t, "run", o, recordFailed, "no space left on device")
	requireNotTorn(t, data)
	st := record(t, data, id)
	if st.Str("state") != "running" {
		t.Fatalf("record state %q, want the last complete one (running)", st.Str("state"))
	}
	pid, _ := st.Int("runner_pid")
	if id, err := procid.Restore(pid, st.Str("runner_birth_token")); err == nil && id.Matches() {
		t.Fatalf("runner %d outlived its supervisor", pid)
	}
	s := cli(t, baseEnv(data), "status", id)
	if s.code != 0 || !strings.Contains(s.stdout, "supervisor lost") {
		t.Fatalf("status on a full disk: exit %d, stdout %q, stderr %q", s.code, s.stdout, s.stderr)
	}
}

// TestReadOnlyDataDir: a read-only LOKI_DATA_DIR makes run refuse before
// the runner starts and stop refuse without touching the record; readers
// (status, list) keep working.
func TestReadOnlyDataDir(t *testing.T) {
	requireMountNS(t)
	data := t.TempDir()
	id := "f0000000-0000-4000-8000-000000000002"
	store := state.NewStore(filepath.Join(data, "dashboard", "builds"))
	if _, err := store.Update(state.MustParseID(id), map[string]any{"state": "running", "supervisor_pid": 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(store.Path(state.MustParseID(id), state.StateFile))
	bindReadOnly(t, data)
	env := baseEnv(data)

	requireRunRefused(t, env, "read-only file system")
	requireRefused(t, "stop", cli(t, env, "stop", id), 1, "read-only file system")
	after, _ := os.ReadFile(store.Path(state.MustParseID(id), state.StateFile))
	if string(after) != string(before) {
		t.Fatalf("record changed on a read-only dir:\n%s", after)
	}
	for _, args := range [][]string{{"status", id}, {"list"}} {
		if o := cli(t, env, args...); o.code != 0 || !strings.Contains(o.stdout, id) {
			t.Fatalf("%v on a read-only dir: exit %d, stdout %q, stderr %q", args, o.code, o.stdout, o.stderr)
		}
	}
	requireNotTorn(t, data)
}

// TestUnwritableRunnerLog: when runner.log cannot be opened for appending
// (a read-only file, or a directory in its place), the runner never
// starts, the record ends launch_failed with the cause, and run exits 127.
func TestUnwritableRunnerLog(t *testing.T) {
	requireMountNS(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, log string)
		cause string
	}{
		{"read-only file", func(t *testing.T, log string) {
			if err := os.WriteFile(log, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			bindReadOnly(t, log)
		}, "read-only file system"},
		{"directory", func(t *testing.T, log string) {
			if err := os.Mkdir(log, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"link", func(t *testing.T, log string) {
			// A file elsewhere the runner must neither append to nor chmod.
			target := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, log); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 || fi.Size() != 4 {
					t.Errorf("the link's target was touched: %v %v", fi, err)
				}
			})
		}, "link or not a regular file"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			id := "f0000000-0000-4000-8000-00000000001" + string(rune('0'+i))
			dir := filepath.Join(data, "dashboard", "builds", id)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, filepath.Join(dir, state.LogFile))
			marker := filepath.Join(t.TempDir(), "ran")
			o := cli(t, baseEnv(data), "run", "--execution-id", id, "--workspace", t.TempDir(), "--",
				"/bin/sh", "-c", "touch "+marker)
			if o.code != 127 {
				t.Fatalf("exit %d, want 127 (runner not launched); stderr %q", o.code, o.stderr)
			}
			requireNoCrash(t, o.stderr)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the runner ran without a log")
			}
			st := record(t, data, id)
			if st.Str("state") != "exited" || st.Str("termination_reason") != "launch_failed" ||
				!strings.Contains(st.Str("launch_error"), tc.cause) {
				t.Fatalf("record: state %q reason %q launch_error %q", st.Str("state"),
					st.Str("termination_reason"), st.Str("launch_error"))
			}
			s := cli(t, baseEnv(data), "status", id)
			if s.code != 0 || !strings.Contains(s.stdout, "launch_failed") {
				t.Fatalf("status: exit %d, stdout %q", s.code, s.stdout)
			}
			requireNotTorn(t, data)
		})
	}
}
