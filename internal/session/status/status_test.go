package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loki-sh/loki/internal/session/status/statustest"
)

func fileSink(t *testing.T) (*Sink, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.jsonl")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func sampleStart() Start {
	return Start{Session: "session-1", Backend: "namespace", InitPID: 42, UserNS: "private", UID: 1879048192, GID: 1879048192,
		Policy:   Policy{FS: "confined", Writable: []string{"/work"}, ReadOnly: []string{"/"}, Network: "loopback", Allow: []string{"api.example.com"}, Limits: Limits{PidsMax: 64, MemoryMax: 64 << 20, CPUMax: 0.5}, Syscalls: "loki-keyring-deny"},
		Observes: []Kind{Egress, Pids, Memory}, Cannot: map[Kind]string{Write: "not read"}}
}

// TestStreamIsSchema: every line a session writes validates against
// docs/status.schema.json, repeats come back as counts before end, and
// the file is 0600.
func TestStreamIsSchema(t *testing.T) {
	sink, path := fileSink(t)
	r := New(sink)
	r.Start(sampleStart())
	for range 3 {
		r.Refused(Refusal{What: Egress, Host: "example.com:443"})
	}
	r.Refused(Refusal{What: Write, Path: "/etc/hosts", PID: 7, Comm: "sh"})
	r.Refused(Refusal{What: Pids, Count: 12})
	r.End(End{Code: 125, Reason: LimitPids, Duration: 1.5, Ran: 1.4, BytesIn: 10, BytesOut: -1}, time.Second)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := statustest.Lines(b)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, l := range lines {
		events = append(events, l["event"].(string))
	}
	if got := strings.Join(events, " "); got != "start refused refused refused refused end" {
		t.Fatalf("events %q", got)
	}
	if c := lines[4]["count"].(float64); c != 3 || lines[4]["host"] != "example.com:443" {
		t.Fatalf("repeat count line %v, want example.com:443 with 3", lines[4])
	}
	end := lines[5]
	if ref := end["refusals"].(map[string]any); ref["egress"].(float64) != 3 || ref["pids"].(float64) != 12 || ref["write"].(float64) != 1 {
		t.Fatalf("end refusals %v", ref)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	if want := "refused: 1 write: /etc/hosts; 3 egress requests: example.com:443 (3)"; r.Summary() != want {
		t.Fatalf("summary %q, want %q", r.Summary(), want)
	}
}

// TestRefusedBeforeStart: start waits for the peer's pid, and a refusal
// recorded meanwhile comes after it as it would have come (the first
// with count 1, the total before end): the stream never has a line
// before start.
func TestRefusedBeforeStart(t *testing.T) {
	sink, path := fileSink(t)
	r := New(sink)
	r.Refused(Refusal{What: Egress, Host: "example.com:443"})
	r.Refused(Refusal{What: Egress, Host: "example.com:443"})
	r.Start(sampleStart())
	r.Refused(Refusal{What: Egress, Host: "example.com:443"})
	r.End(End{Reason: PeerExit, BytesOut: -1}, time.Second)
	b, _ := os.ReadFile(path)
	lines, err := statustest.Lines(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%v %v", l["event"], l["count"]))
	}
	if want := "start <nil>,refused 1,refused 3,end <nil>"; strings.Join(got, ",") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, ","), want)
	}
}

// TestGoldenExamples: the examples in docs validate, and so does what
// this package writes for the same content.
func TestGoldenExamples(t *testing.T) {
	path := filepath.Join(filepath.Dir(statustest.SchemaPath()), "status.examples.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := statustest.Lines(b)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l["event"].(string)] = true
		if r, ok := l["reason"].(string); ok {
			seen[r] = true
		}
	}
	for _, want := range []string{"start", "refused", "end"} {
		if !seen[want] {
			t.Errorf("no %s example", want)
		}
	}
	for _, r := range Reasons {
		if err := statustest.Validate(Line("end", time.Second, endLine{End: End{Reason: r, BytesOut: -1}, Refusals: map[Kind]int64{}, Untold: map[Kind]int64{}})); err != nil {
			t.Errorf("reason %s: %v", r, err)
		}
	}
	if err := statustest.Validate(Line("end", 0, endLine{End: End{Reason: "made-up"}, Refusals: map[Kind]int64{}, Untold: map[Kind]int64{}})); err == nil {
		t.Error("a reason outside the set validated")
	}
}

// TestMillionRefusalsBounded: a million distinct refusals keep MaxKeys
// keys and MaxKeys lines, count the rest by kind, and do not grow the
// heap past a few MiB.
func TestMillionRefusalsBounded(t *testing.T) {
	sink, path := fileSink(t)
	r := New(sink)
	r.Start(sampleStart())
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 1_000_000
	var key [16]byte
	for i := range n {
		copy(key[:], "/p/")
		key[3] = byte(i)
		key[4] = byte(i >> 8)
		key[5] = byte(i >> 16)
		r.Refused(Refusal{What: Write, Path: string(key[:6])})
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Fatalf("heap grew %d bytes for %d refusals", grew, n)
	}
	if len(r.table) != MaxKeys {
		t.Fatalf("%d keys, want %d", len(r.table), MaxKeys)
	}
	r.End(End{Reason: PeerExit, BytesOut: -1}, time.Second)
	b, _ := os.ReadFile(path)
	lines, err := statustest.Lines(b)
	if err != nil {
		t.Fatal(err)
	}
	end := lines[len(lines)-1]
	if end["refusals"].(map[string]any)["write"].(float64) != n || end["untold"].(map[string]any)["write"].(float64) != n-MaxKeys {
		t.Fatalf("end %v", end)
	}
	if len(lines) > MaxKeys+2+int(end["dropped"].(float64)) {
		t.Fatalf("%d lines", len(lines))
	}
}

// TestRepeatAllocatesNothing: a repeated refusal (a peer's denied
// syscall in a loop) is counted without an allocation, so the
// supervisor's heap does not churn with it.
func TestRepeatAllocatesNothing(t *testing.T) {
	r := New(nil)
	r.Refused(Refusal{What: Syscall, Syscall: "keyctl", PID: 7, Comm: "x"})
	if n := testing.AllocsPerRun(1000, func() { r.Refused(Refusal{What: Syscall, Syscall: "keyctl"}) }); n != 0 {
		t.Fatalf("%v allocations per repeat", n)
	}
}

// TestReaderNeverBlocks: a reader that never reads, or one that is gone,
// costs lines (counted), not time.
func TestReaderNeverBlocks(t *testing.T) {
	for _, gone := range []bool{false, true} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if gone {
			pr.Close()
		} else {
			defer pr.Close()
		}
		r := New(&Sink{f: pw})
		start := time.Now()
		r.Start(sampleStart())
		for i := range 100_000 {
			r.Refused(Refusal{What: Egress, Host: strings.Repeat("h", 200) + string(rune('a'+i%26)) + string(rune(i))})
		}
		r.End(End{Reason: PeerExit, BytesOut: -1}, 200*time.Millisecond)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("gone=%v: %v for 100000 refusals and the end", gone, d)
		}
		if r.out.dropped() == 0 {
			t.Fatalf("gone=%v: nothing counted as dropped", gone)
		}
	}
}

// FuzzLine: whatever bytes a path, host or command name holds, a line is
// one line of valid JSON of the schema, and the strings come back as
// their valid-UTF-8 selves.
func FuzzLine(f *testing.F) {
	f.Add("/etc/hosts", "example.com:443", "sh", int64(1))
	f.Add("a\nb\"c\\\x00\xff", "\u2028", "\x7f", int64(99))
	f.Fuzz(func(t *testing.T, path, host, comm string, count int64) {
		count = max(count, 1)
		line := Line("refused", time.Millisecond, Refusal{What: Write, Path: path, Host: host, Comm: comm, Count: count})
		if err := statustest.Validate(line); err != nil {
			t.Fatal(err)
		}
		var back Refusal
		if err := json.Unmarshal(bytes.TrimSpace(line), &back); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]string{{path, back.Path}, {host, back.Host}, {comm, back.Comm}} {
			if want := strings.ToValidUTF8(p[0], "\uFFFD"); p[1] != want && utf8.ValidString(p[0]) {
				t.Fatalf("%q came back as %q", p[0], p[1])
			}
		}
	})
}
