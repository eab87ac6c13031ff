//go:build linux

package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirWritableByRunnerRefused: a record the runner can write is a
// record it can rewrite, so `run` refuses LOKI_DATA_DIR inside the
// workspace ("" is the current directory, here the workspace) or inside a
// runtime write path, with one line and exit 2, before anything runs
// (before: accepted, and the runner could edit its own state.json).
func TestDataDirWritableByRunnerRefused(t *testing.T) {
	requireLandlock(t)
	for _, tc := range []struct {
		name     string
		data     func(b *box) string
		confined bool
	}{
		{"empty is the workspace", func(*box) string { return "" }, false},
		{"inside the workspace", func(b *box) string { return filepath.Join(b.ws, "records") }, false},
		{"inside a runtime write path", func(b *box) string { return filepath.Join(b.out, "records") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t)
			data := tc.data(b)
			b.extra = []string{"LOKI_DATA_DIR=" + data}
			ran := filepath.Join(b.root, "ran")
			r := b.start(tc.confined, "touch "+ran)
			code, ok := r.exit(wait)
			if !ok {
				t.Fatal("supervisor did not exit")
			}
			stderr := r.stderr.String()
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "LOKI_DATA_DIR") {
				t.Errorf("exit %d, stderr %q: want 2 and one line naming LOKI_DATA_DIR", code, stderr)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the runner ran")
			}
			if data == "" {
				data = b.ws
			}
			if _, err := os.Stat(filepath.Join(data, "dashboard", "builds", r.id)); err == nil {
				t.Error("a record was made where the runner can write")
			}
		})
	}
}

// TestQueuedRecordHasNoSupervisorToLose: the dashboard's flow writes
// "queued" with update-state before it starts a supervisor; list and
// status must show it queued (before: "queued (supervisor lost)").
func TestQueuedRecordHasNoSupervisorToLose(t *testing.T) {
	b := newBox(t)
	id := newID()
	if _, stderr, code := b.cli("update-state", id, `{"state":"queued"}`); code != 0 {
		t.Fatalf("update-state: exit %d: %s", code, stderr)
	}
	out, stderr, code := b.cli("list")
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("list: exit %d, %q %q", code, out, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, id) && (!strings.Contains(line, "queued") || strings.Contains(line, "lost")) {
			t.Errorf("list shows %q, want queued", line)
		}
	}
	if out, _, _ := b.cli("status", id, "--json"); !strings.Contains(out, `"display_state": "queued"`) {
		t.Errorf("status --json: %s", out)
	}
}
