package session

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/lease"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		exit     Exit
		killedBy syscall.Signal
		want     int
	}{
		{"success", Exit{}, 0, 0},
		{"peer code", Exit{Code: 7}, 0, 7},
		{"lease expired", Exit{Code: 124}, 0, 124},
		{"backend failed", Exit{Code: 1, Err: errors.New("x")}, 0, 127},
		{"killed after SIGTERM", Exit{Signal: 9}, syscall.SIGTERM, 143},
		{"killed after SIGINT", Exit{Signal: 9}, syscall.SIGINT, 130},
		{"init died of a signal nobody sent", Exit{Signal: 9}, 0, 125},
		{"out of range code", Exit{Code: 300}, 0, 125},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitcode.Code(decide(tc.exit, tc.killedBy, 0)); got != tc.want {
				t.Fatalf("decide(%+v, %v) = %d, want %d", tc.exit, tc.killedBy, got, tc.want)
			}
		})
	}
}

// A peer ended by the signal the supervisor forwarded gives the shell's
// 128+N (Ctrl-C: 130): the direct peer with a line saying what happened,
// the init's 125 silently (its own line said it). Before, both were 125.
func TestDecideForwarded(t *testing.T) {
	err := decide(Exit{Signal: 15}, 0, syscall.SIGTERM)
	if exitcode.Code(err) != 143 {
		t.Fatalf("code %d, want 143", exitcode.Code(err))
	}
	if got := exitcode.Report(err).Error(); got != "the peer was ended by SIGTERM after SIGTERM was forwarded to it" {
		t.Fatalf("line %q", got)
	}
	err = decide(Exit{Code: 125}, 0, syscall.SIGINT)
	if exitcode.Code(err) != 130 || exitcode.Report(err) != nil {
		t.Fatalf("init's 125 after SIGINT: code %d, report %v; want 130, silent", exitcode.Code(err), exitcode.Report(err))
	}
	if exitcode.Code(decide(Exit{Code: 42}, 0, syscall.SIGINT)) != 42 {
		t.Fatal("a peer that exits on the signal must keep its own code")
	}
}

// TestRenewLoop: a watcher started after the loop sees renewals quickly
// (the fast start-up phase), and none after stop.
func TestRenewLoop(t *testing.T) {
	dir := t.TempDir()
	w, err := lease.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{LeaseDuration: 5 * time.Second, RenewInterval: time.Second, PollInterval: 100 * time.Millisecond}
	cfg.defaults()
	stop := renewLoop(w, cfg, nil, func() {})
	watch := lease.NewWatcher(w.Path(), cfg.LeaseDuration, time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for watch.Renewals() < 3 && time.Now().Before(deadline) {
		watch.Observe(time.Now())
		time.Sleep(10 * time.Millisecond)
	}
	if watch.Renewals() < 3 {
		t.Fatalf("only %d renewals observed", watch.Renewals())
	}
	stop()
	v1, _ := lease.Read(w.Path())
	time.Sleep(300 * time.Millisecond)
	if v2, _ := lease.Read(w.Path()); v1 != v2 {
		t.Fatal("lease renewed after stop")
	}
}

// TestWithRelay: a cut input relay turns a clean session into 125 and is
// noted; a session that failed anyway keeps its own code.
func TestWithRelay(t *testing.T) {
	cut := errors.New("read stdin: input/output error")
	var notes strings.Builder
	if got := exitcode.Code(withRelay(nil, cut, &notes)); got != 125 {
		t.Fatalf("clean session with a cut relay: %d, want 125", got)
	}
	if !strings.Contains(notes.String(), "stdin was cut short") {
		t.Fatalf("no note: %q", notes.String())
	}
	if got := exitcode.Code(withRelay(exitcode.Exited(7), cut, io.Discard)); got != 7 {
		t.Fatalf("failed session: %d, want its own 7", got)
	}
	if got := exitcode.Code(withRelay(nil, nil, io.Discard)); got != 0 {
		t.Fatalf("clean relay: %d", got)
	}
}
