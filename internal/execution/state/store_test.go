package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/loki-sh/loki/internal/safefile"
	"github.com/loki-sh/loki/internal/testutil"
)

var testID = MustParseID("6a1f3c2e-9b8d-4e7f-a6c5-d4b3a2918070")

func TestUpdateCreatesAndMerges(t *testing.T) {
	s := NewStore(t.TempDir())
	if _, err := s.Read(testID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read before any write = %v, want ErrNotFound", err)
	}
	if _, err := s.Update(testID, map[string]any{"state": "running", "runner_pid": 42}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Update(testID, map[string]any{"state": "exited", "signal": nil, "list": []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(testID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []State{st, got} {
		if m.Str("state") != "exited" || m.Str("execution_id") != testID.String() {
			t.Errorf("record %v", m)
		}
		if n, ok := m.Int("runner_pid"); !ok || n != 42 {
			t.Errorf("runner_pid lost: %v", m["runner_pid"])
		}
		if v, ok := m.Int("schema_version"); !ok || v != SchemaVersion {
			t.Errorf("schema_version = %v", m["schema_version"])
		}
		if _, present := m["signal"]; !present || m["signal"] != nil {
			t.Errorf("signal should be an explicit null, got %#v", m["signal"])
		}
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	s := NewStore(t.TempDir())
	dir := s.Dir(testID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	raw := `{"execution_id":"` + testID.String() + `","dashboard_note":{"x":[1,2.50,1e3]},"big":12345678901234567890}`
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(testID, map[string]any{"state": "running"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, StateFile))
	for _, want := range []string{`"dashboard_note": {`, `"big": 12345678901234567890`, `"state": "running"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("state.json lost %s:\n%s", want, b)
		}
	}
	if _, ok := (State{}).Int("x"); ok {
		t.Error("Int of a missing field is ok")
	}
}

// TestEncodingMatchesPython compares state.json byte for byte with what
// the reference's json.dumps(sort_keys, indent=2, ensure_ascii)+"\n" makes.
func TestEncodingMatchesPython(t *testing.T) {
	py := testutil.RequireCommand(t, "python3")
	s := NewStore(t.TempDir())
	fields := map[string]any{
		"state": "exited", "returncode": -9, "exit_code": nil, "signal": 9,
		"launch_error": "caf\u00e9 \u2603 \U0001F600 <&> \"q\" \\ \t",
		"descendants":  map[string]any{"term_sent": []int{}, "kill_sent": []int{3, 1}, "checked": true},
		"proof":        map[string]any{"execution": map[string]any{}, "ratio": 0.25},
	}
	if _, err := s.Update(testID, fields); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(s.Path(testID, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", `import json,sys; d=json.load(open(sys.argv[1])); sys.stdout.write(json.dumps(d, sort_keys=True, indent=2, ensure_ascii=True)+"\n")`, s.Path(testID, StateFile))
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoding differs from Python\n got: %s\nwant: %s", got, want)
	}
}

func TestPermissions(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dashboard", "builds")
	s := NewStore(root)
	if _, err := s.Update(testID, map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSpec(testID, []byte("spec")); err != nil {
		t.Fatal(err)
	}
	f, err := s.OpenLog(testID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := safefile.WriteAtomic(s.Path(testID, ProofFile), []byte("{}"), 0o400); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		root:                      0o700 | os.ModeDir,
		s.Dir(testID):             0o700 | os.ModeDir,
		s.Path(testID, StateFile): 0o600,
		s.Path(testID, LogFile):   0o600,
		s.Path(testID, SpecFile):  0o600,
		s.Path(testID, lockFile):  0o600,
		s.Path(testID, ProofFile): 0o400,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
	}
	// No temporary files are left behind by successful writes.
	ents, _ := os.ReadDir(s.Dir(testID))
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".tmp" {
			t.Errorf("leftover temp file %s", e.Name())
		}
	}
}

func TestLogIsAppendOnly(t *testing.T) {
	s := NewStore(t.TempDir())
	for _, line := range []string{"one\n", "two\n"} {
		f, err := s.OpenLog(testID)
		if err != nil {
			t.Fatal(err)
		}
		f.Seek(0, 0) // O_APPEND ignores the offset
		f.WriteString(line)
		f.Close()
	}
	b, _ := os.ReadFile(s.Path(testID, LogFile))
	if string(b) != "one\ntwo\n" {
		t.Errorf("log = %q", b)
	}
}

// runner.log is never followed: a link planted at its name (to a file the
// runner would otherwise append to and chmod 0600) is refused, and so is a
// name that is not a regular file.
func TestLogRefusesLinksAndNonRegularFiles(t *testing.T) {
	s := NewStore(t.TempDir())
	if _, err := s.Update(testID, map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := s.Path(testID, LogFile)
	if err := os.Symlink(target, log); err != nil {
		t.Fatal(err)
	}
	if f, err := s.OpenLog(testID); !errors.Is(err, ErrNotRegular) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("OpenLog through a link: %v, want ErrNotRegular", err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the link's target was touched: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
	os.Remove(log)
	if err := os.Mkdir(log, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenLog(testID); err == nil {
		t.Fatal("OpenLog of a directory succeeded")
	}
}

func TestSnapshotSpecKeepsExisting(t *testing.T) {
	s := NewStore(t.TempDir())
	if err := s.SnapshotSpec(testID, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := s.SnapshotSpec(testID, []byte("second")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.Path(testID, SpecFile)); string(b) != "first" {
		t.Errorf("spec.md = %q, want the first snapshot", b)
	}
}

func TestConcurrentUpdatesGoroutines(t *testing.T) {
	s := NewStore(t.TempDir())
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(testID, map[string]any{"g" + strconv.Itoa(i): i})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Read(testID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if v, ok := st.Int("g" + strconv.Itoa(i)); !ok || v != i {
			t.Errorf("field g%d lost", i)
		}
	}
}

// helperEnv switches the test binary into a helper process (TestMain).
const helperEnv = "LOKI_STATE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "update":
		os.Exit(helperUpdate())
	case "loop":
		os.Exit(helperLoop())
	}
	os.Exit(m.Run())
}

// helperUpdate writes fields p<N>_<i> for i < COUNT, one Update each.
func helperUpdate() int {
	s := NewStore(os.Getenv("STORE"))
	n, _ := strconv.Atoi(os.Getenv("COUNT"))
	for i := range n {
		if _, err := s.Update(testID, map[string]any{fmt.Sprintf("p%s_%d", os.Getenv("WHO"), i): i}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// helperLoop rewrites a large record forever, until killed.
func helperLoop() int {
	s := NewStore(os.Getenv("STORE"))
	pad := bytes.Repeat([]byte("x"), 64<<10)
	fmt.Println("ready")
	for i := 0; ; i++ {
		if _, err := s.Update(testID, map[string]any{"counter": i, "pad": string(pad[:(i*977)%len(pad)])}); err != nil {
			return 1
		}
	}
}

func helper(t *testing.T, mode string, env ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	return cmd
}

func TestConcurrentUpdatesProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 6, 25
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helper(t, "update", "STORE="+dir, "COUNT="+strconv.Itoa(each), "WHO="+strconv.Itoa(p))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper failed: %v", err)
		}
	}
	st, err := NewStore(dir).Read(testID)
	if err != nil {
		t.Fatal(err)
	}
	for p := range procs {
		for i := range each {
			k := fmt.Sprintf("p%d_%d", p, i)
			if v, ok := st.Int(k); !ok || v != i {
				t.Errorf("field %s lost", k)
			}
		}
	}
}

// TestKillDuringWritesNeverTorn kills a process in the middle of a loop of
// large writes, many times, while this process reads the record as fast
// as it can: every read, and the record after every kill, must be a
// complete JSON object.
func TestKillDuringWritesNeverTorn(t *testing.T) {
	if testing.Short() {
		t.Skip("kill loop skipped in -short")
	}
	dir := t.TempDir()
	s := NewStore(dir)
	reads, lastCounter := 0, -1
	for round := range 8 {
		cmd := helper(t, "loop", "STORE="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil {
			t.Fatal(err)
		}
		// Read until the writer has made progress, then kill it mid-loop.
		for seen := 0; seen < 20+round*7; {
			st, err := s.Read(testID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("torn read after %d reads: %v", reads, err)
			}
			reads++
			if c, ok := st.Int("counter"); ok && c != lastCounter {
				lastCounter = c
				seen++
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		b, err := os.ReadFile(s.Path(testID, StateFile))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("round %d: record after kill -9 is not JSON: %v", round, err)
		}
	}
	if reads == 0 {
		t.Fatal("no snapshot was read")
	}
	// The lock of a killed writer is released by the kernel: one more
	// update must go through.
	if _, err := s.Update(testID, map[string]any{"after": true}); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultStore(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real)
	tests := []struct{ name, env, home, want string }{
		{"symlink resolved", link, "", filepath.Join(realResolved, "dashboard", "builds")},
		{"missing tail kept", filepath.Join(link, "new"), "", filepath.Join(realResolved, "new", "dashboard", "builds")},
		{"tilde expands", "~/data", real, filepath.Join(realResolved, "data", "dashboard", "builds")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LOKI_DATA_DIR", tc.env)
			if tc.home != "" {
				t.Setenv("HOME", tc.home)
			}
			s, err := DefaultStore()
			if err != nil {
				t.Fatal(err)
			}
			if s.Root() != tc.want {
				t.Errorf("root = %s, want %s", s.Root(), tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	s := NewStore(t.TempDir())
	a, b := MustParseID("00000000-0000-4000-8000-000000000002"), MustParseID("00000000-0000-4000-8000-000000000001")
	for _, id := range []ID{a, b} {
		if _, err := s.Update(id, map[string]any{"state": "running"}); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(s.Root(), "not-an-id"), 0o700)
	os.MkdirAll(filepath.Join(s.Root(), "00000000000040008000000000000003"), 0o700) // non-canonical name
	bad := MustParseID("00000000-0000-4000-8000-000000000004")
	os.MkdirAll(s.Dir(bad), 0o700)
	os.WriteFile(s.Path(bad, StateFile), []byte("[1,2"), 0o600)
	got, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != b || got[1].ID != a || got[2].ID != bad {
		t.Fatalf("List = %+v", got)
	}
	if !errors.Is(got[2].Err, ErrCorrupt) {
		t.Errorf("corrupt record error = %v", got[2].Err)
	}
}

// FuzzDecode: the reader never panics, and anything it accepts survives a
// write/read cycle unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,2.5,"x"],"c":{"d":null}}`, `[]`, `{"a":`, `{"a":1}{"b":2}`, `{"\u00e9":"\ud83d\ude00"}`, `{"n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error class %v", err)
			}
			return
		}
		enc, err := encode(st)
		if err != nil {
			return // values Python could not write either (e.g. huge exponents)
		}
		if bytes.Contains(enc, []byte("Infinity")) || bytes.Contains(enc, []byte("NaN")) {
			return // Python's spelling of an overflowed number; encoding/json cannot read it
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode of our own output failed: %v\n%s", err, enc)
		}
		enc2, err := encode(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// TestDeadWritersTempRemoved: a writer killed between creating its temp
// file and renaming it leaves .state.json.*.tmp behind; the next update,
// holding the lock no live writer could hold, removes it and nothing else.
func TestDeadWritersTempRemoved(t *testing.T) {
	s := NewStore(t.TempDir())
	if _, err := s.Update(testID, map[string]any{"state": "running"}); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(s.Dir(testID), "."+StateFile+".123456.tmp")
	other := filepath.Join(s.Dir(testID), ".spec.md.99.tmp")
	for _, p := range []string{dead, other} {
		if err := os.WriteFile(p, []byte(`{"state":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(testID, map[string]any{"state": "exited"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("dead writer's temp file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a temp file that is not state.json's was removed: %v", err)
	}
}
