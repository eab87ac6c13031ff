package execution

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/state"
)

// FuzzResolvePath: every path argument is either refused with ErrBadPath
// (whose message never carries a control character) or comes out
// absolute, clean, free of symlinks and of the asked kind.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{".", "/", "fuzz_test.go", "./../execution", "/proc/self/exe", "/dev/null",
		"", " ", "a\x00b", "x\ny", "/nonexistent/x", "~", strings.Repeat("a/", 300), "testdata/../../state/doc.go"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, file bool) {
		kind := Dir
		if file {
			kind = File
		}
		got, err := ResolvePath("--flag", raw, kind)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("error class: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\x00\r") {
				t.Fatalf("message carries a control character: %q", err.Error())
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.ContainsAny(got, "\x00\n\r\t") {
			t.Fatalf("%q resolved to %q", raw, got)
		}
		if real, err := filepath.EvalSymlinks(got); err != nil || real != got {
			t.Fatalf("%q resolved to %q, which still has symlinks (%q, %v)", raw, got, real, err)
		}
		fi, err := os.Stat(got)
		if err != nil || (kind == Dir) != fi.IsDir() || (kind == File && !fi.Mode().IsRegular()) {
			t.Fatalf("%q resolved to %q of the wrong kind (%v)", raw, got, err)
		}
	})
}

// FuzzDescribe: status and list derive their view from whatever record is
// on disk; a hostile record never makes them panic, and the view is never
// "running" for a record whose supervisor cannot be proven alive.
func FuzzDescribe(f *testing.F) {
	for _, s := range []string{`{}`, `{"state":"running","supervisor_pid":1,"supervisor_birth_token":"proc:x:1"}`,
		`{"state":"exited","termination_reason":7}`, `{"state":"running","supervisor_pid":-5,"supervisor_birth_token":"ps:1"}`,
		`{"state":"running","supervisor_pid":99999999999999999999,"supervisor_birth_token":""}`,
		`{"state":["x"],"stop_requested_at":{}}`, `{"supervisor_pid":"1","supervisor_birth_token":"darwin:1:2"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := state.Decode(b)
		if err != nil {
			return
		}
		v := Describe(st)
		if v.Display == "" {
			t.Fatalf("empty display state for %s", b)
		}
		queued := st.Str("state") == StateQueued && !supervisorRecorded(st)
		if st.Str("state") != "exited" && !queued && !v.SupervisorAlive && !strings.HasSuffix(v.Display, "(supervisor lost)") {
			t.Fatalf("record %s shown as %q without a live supervisor", b, v.Display)
		}
		out := v.JSON()
		if out["display_state"] != v.Display {
			t.Fatalf("JSON view disagrees: %v", out)
		}
	})
}
