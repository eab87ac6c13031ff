package execution

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

type fakeProof struct{ completed bool }

func (fakeProof) Bind(string, string)  {}
func (p fakeProof) Completed(int) bool { return p.completed }

func TestTerminationReason(t *testing.T) {
	clean := lineage.EmptyOutcome()
	clean.Checked, clean.Quiescent = true, true
	detected := clean
	detected.Detected = true
	uncontained := detected
	uncontained.Quiescent = false
	failed := lineage.EmptyOutcome()
	failed.Error = "Runner lineage tracking failed: OSError"
	tests := []struct {
		name    string
		desc    lineage.Outcome
		stopped bool
		rc      int
		proof   bool
		plain   bool
		want    string
	}{
		{"descendants win over everything", detected, true, 0, true, false, "descendants_terminated"},
		{"uncontained", uncontained, false, 0, true, false, "descendants_uncontained"},
		{"tracking error", failed, false, 0, true, false, "descendant_check_failed"},
		{"stopped beats completed", clean, true, 0, true, false, "stopped"},
		{"completed", clean, false, 0, true, false, "completed"},
		{"exit 0 without proof", clean, false, 0, false, false, "verification_failed"},
		{"exit 20", clean, false, 20, true, false, "verification_failed"},
		{"exit 1", clean, false, 1, false, false, "crashed"},
		{"signal", clean, false, -9, false, false, "crashed"},
		{"stopped by signal", clean, true, -15, false, false, "stopped"},
		// A plain run is named by its own result.
		{"run exit 0", clean, false, 0, false, true, "succeeded"},
		{"run exit 20", clean, false, 20, false, true, "failed"},
		{"run signal", clean, false, -9, false, true, "failed"},
		{"run stopped", clean, true, 0, false, true, "stopped"},
		{"run descendants", detected, false, 0, false, true, "descendants_terminated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := terminationReason(tc.desc, tc.stopped, tc.rc, fakeProof{tc.proof}, tc.plain); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestResultExitCode(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want int
	}{
		{Result{Launched: true, Returncode: 0}, 0},
		{Result{Launched: true, Returncode: 3}, 3},
		{Result{Launched: true, Returncode: 300}, 255},
		{Result{Launched: true, Returncode: -9}, 137},
		{Result{Launched: true, Returncode: -15}, 143},
		{Result{Launched: false}, 127},
	} {
		if got := tc.r.ExitCode(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.r, got, tc.want)
		}
	}
}

func TestFormatUTC(t *testing.T) {
	for in, want := range map[time.Time]string{
		time.Date(2026, 12, 2, 18, 45, 1, 123456789, time.UTC):               "2026-12-02T18:45:01.123456Z",
		time.Date(2026, 12, 2, 18, 45, 1, 0, time.UTC):                       "2026-12-02T18:45:01Z",
		time.Date(2026, 12, 2, 18, 45, 1, 999, time.UTC):                     "2026-12-02T18:45:01Z",
		time.Date(2026, 12, 2, 19, 45, 1, 5000, time.FixedZone("CET", 3600)): "2026-12-02T18:45:01.000005Z",
	} {
		if got := formatUTC(in); got != want {
			t.Errorf("formatUTC(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestPositiveSeconds(t *testing.T) {
	const name = "LOKI_TEST_SECONDS"
	def := 10 * time.Second
	for raw, want := range map[string]time.Duration{
		"2.5": 2500 * time.Millisecond, " 3 ": 3 * time.Second, "0.05": 50 * time.Millisecond,
		"0": def, "-1": def, "abc": def, "": def, "nan": def, "inf": def, "1e300": def,
	} {
		t.Setenv(name, raw)
		if got := positiveSeconds(name, def); got != want {
			t.Errorf("%q: %v, want %v", raw, got, want)
		}
	}
	os.Unsetenv(name)
	if got := positiveSeconds(name, def); got != def {
		t.Errorf("unset: %v", got)
	}
}

func TestReadRunID(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "state"), 0o700)
	for content, want := range map[string]string{
		"run-123\n":     "run-123",
		"  run-abc  ":   "run-abc",
		"run-a/b":       "",
		`run-a\b`:       "",
		"xrun-1":        "",
		"":              "",
		"run-../../etc": "",
	} {
		os.WriteFile(filepath.Join(dir, "state", "trust-run-id"), []byte(content), 0o600)
		if got := readRunID(dir); got != want {
			t.Errorf("%q: %q, want %q", content, got, want)
		}
	}
	if got := readRunID(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing dir: %q", got)
	}
}

// TestReadRunIDHostileFile: trust-run-id is the runner's to plant. Each
// kind must give "" at once, never block the poll loop or read the file
// whole (before the fix a FIFO hung it and a sparse file was read each
// poll).
func TestReadRunIDHostileFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(p string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"symlink to a run id", func(p string) error {
			q := p + ".real"
			if err := os.WriteFile(q, []byte("run-1"), 0o600); err != nil {
				return err
			}
			return os.Symlink(q, p)
		}},
		{"sparse 1 GiB", func(p string) error {
			if err := os.WriteFile(p, []byte("run-1"), 0o600); err != nil {
				return err
			}
			return os.Truncate(p, 1<<30)
		}},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "state"), 0o700)
			if err := tc.plant(filepath.Join(dir, "state", "trust-run-id")); err != nil {
				t.Fatal(err)
			}
			done := make(chan string, 1)
			start := time.Now()
			go func() { done <- readRunID(dir) }()
			select {
			case got := <-done:
				if got != "" {
					t.Errorf("run id %q from a planted %s", got, tc.name)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("took %v", d)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("readRunID blocked on a %s", tc.name)
			}
		})
	}
	// state/ itself a link to a dir holding a run id.
	dir, other := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(other, "trust-run-id"), []byte("run-x"), 0o600)
	os.Symlink(other, filepath.Join(dir, "state"))
	if got := readRunID(dir); got != "" {
		t.Errorf("state/ through a link: %q", got)
	}
}

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(dir, "l")
	os.Symlink(file, link)
	realFile, _ := filepath.EvalSymlinks(file)
	realDir, _ := filepath.EvalSymlinks(dir)
	tests := []struct {
		name, raw string
		kind      Kind
		want      string // "" = refused, errSub must appear
		errSub    string
	}{
		{"dir", dir, Dir, realDir, ""},
		{"file through symlink", link, File, realFile, ""},
		{"empty", "", Dir, "", "empty"},
		{"blank", "  ", Dir, "", "empty"},
		{"newline", dir + "\n", Dir, "", "control character"},
		{"missing", filepath.Join(dir, "nope"), Dir, "", "does not exist"},
		{"file for dir", file, Dir, "", "not a directory"},
		{"dir for file", dir, File, "", "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolvePath("--x", tc.raw, tc.kind)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), tc.errSub) || !strings.HasPrefix(err.Error(), "--x: ") {
				t.Fatalf("err = %v, want ErrBadPath mentioning %q", err, tc.errSub)
			}
		})
	}
}

func TestDescribeSupervisorLiveness(t *testing.T) {
	self := os.Getpid()
	tok, err := procid.BirthToken(self)
	if err != nil {
		t.Fatal(err)
	}
	// A process that has exited and been reaped stands for a dead supervisor.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := c.Process.Pid
	tests := []struct {
		name    string
		st      state.State
		alive   bool
		display string
	}{
		{"live supervisor", state.State{"state": "running", "supervisor_pid": self, "supervisor_birth_token": tok}, true, "running"},
		{"stopping", state.State{"state": "running", "supervisor_pid": self, "supervisor_birth_token": tok, "stop_requested_at": "t"}, true, "running (stopping)"},
		{"token changed", state.State{"state": "running", "supervisor_pid": self, "supervisor_birth_token": tok + "0"}, false, "running (supervisor lost)"},
		{"pid gone", state.State{"state": "running", "supervisor_pid": dead, "supervisor_birth_token": tok}, false, "running (supervisor lost)"},
		{"ps token mismatch", state.State{"state": "running", "supervisor_pid": self, "supervisor_birth_token": "ps:never"}, false, "running (supervisor lost)"},
		{"no supervisor yet", state.State{}, false, "starting (supervisor lost)"},
		// Before the fix: "queued (supervisor lost)" with no supervisor ever.
		{"queued by the dashboard", state.State{"state": "queued", "execution_id": "x"}, false, "queued"},
		{"queued, supervisor died", state.State{"state": "queued", "supervisor_pid": dead, "supervisor_birth_token": tok}, false, "queued (supervisor lost)"},
		{"exited", state.State{"state": "exited", "termination_reason": "crashed"}, false, "exited (crashed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Describe(tc.st)
			if v.SupervisorAlive != tc.alive || v.Display != tc.display {
				t.Fatalf("Describe = %v %q, want %v %q", v.SupervisorAlive, v.Display, tc.alive, tc.display)
			}
			j := v.JSON()
			if _, stored := tc.st["supervisor_alive"]; stored {
				t.Fatal("Describe wrote a derived field into the record")
			}
			if tc.st.Str("state") != "exited" && j["supervisor_alive"] != tc.alive {
				t.Fatalf("json supervisor_alive = %v", j["supervisor_alive"])
			}
		})
	}
}

func TestRequestStop(t *testing.T) {
	store := state.NewStore(t.TempDir())
	id := NewID()
	if _, err := RequestStop(store, id); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("stop of unknown execution = %v", err)
	}
	if _, err := os.Stat(store.Dir(id)); err == nil {
		t.Error("stop of an unknown execution created its directory")
	}
	store.Update(id, map[string]any{"state": "running"})
	r1, err := RequestStop(store, id)
	if err != nil || r1.AlreadyRequested || r1.RequestedAt == "" || r1.SupervisorAlive {
		t.Fatalf("first stop = %+v, %v", r1, err)
	}
	r2, err := RequestStop(store, id)
	if err != nil || !r2.AlreadyRequested || r2.RequestedAt != r1.RequestedAt {
		t.Fatalf("second stop = %+v, %v", r2, err)
	}
	store.Update(id, map[string]any{"state": "exited", "termination_reason": "crashed"})
	if _, err := RequestStop(store, id); !errors.Is(err, ErrAlreadyExited) || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("stop after exit = %v", err)
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		s := id.String()
		if s[14] != '4' || !strings.ContainsRune("89ab", rune(s[19])) || seen[s] {
			t.Fatalf("bad or repeated v4 id %s", s)
		}
		seen[s] = true
	}
}
