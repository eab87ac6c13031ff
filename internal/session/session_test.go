package session

import (
	"errors"
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
			if got := exitcode.Of(decide(tc.exit, tc.killedBy), -1); got != tc.want {
				t.Fatalf("decide(%+v, %v) = %d, want %d", tc.exit, tc.killedBy, got, tc.want)
			}
		})
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
	stop := renewLoop(w, cfg)
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
