package pid1

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/lease"
)

func writeLease(t *testing.T, dir, value string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp")
	if err := os.WriteFile(tmp, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, lease.FileName)); err != nil {
		t.Fatal(err)
	}
}

// The check timer sits in the middle of the window, then at its end.
func TestGuardNextCheck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := lease.NewWatcher(filepath.Join(t.TempDir(), lease.FileName), 4*time.Second, t0)
	g := &guard{w: w, duration: 4 * time.Second}
	cases := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 2 * time.Second},
		{time.Second, time.Second},
		{2 * time.Second, 2 * time.Second},
		{3 * time.Second, time.Second},
		{5 * time.Second, 0},
	}
	for _, tc := range cases {
		if got := g.nextCheck(t0.Add(tc.at)); got != tc.want {
			t.Errorf("at +%v: next check in %v, want %v", tc.at, got, tc.want)
		}
	}
}

// Contract 1 through the guard: the baseline never counts, only a new
// 8-byte value does, and no renewal for the duration is expiry.
func TestGuardObserve(t *testing.T) {
	dir := t.TempDir()
	writeLease(t, dir, "AAAAAAAA")
	t0 := time.Now()
	w := lease.NewWatcher(filepath.Join(dir, lease.FileName), 2*time.Second, t0)
	g := newGuard(w, 2*time.Second, 100*time.Millisecond, true, t0)
	steps := []struct {
		value   string // "" = leave the file alone
		at      time.Duration
		renewed bool
		expired bool
	}{
		{"", 100 * time.Millisecond, false, false},         // stale baseline
		{"short", 200 * time.Millisecond, false, false},    // no evidence
		{"AAAAAAAA", 300 * time.Millisecond, false, false}, // same value
		{"BBBBBBBB", 400 * time.Millisecond, true, false},  // renewal
		{"toolong!!", 2 * time.Second, false, false},       // long: no evidence
		{"", 2400 * time.Millisecond, false, true},         // window passed
	}
	for i, st := range steps {
		if st.value != "" {
			writeLease(t, dir, st.value)
		}
		renewed, err := g.observe(t0.Add(st.at))
		if renewed != st.renewed || errors.Is(err, lease.ErrExpired) != st.expired {
			t.Fatalf("step %d: renewed=%v err=%v", i, renewed, err)
		}
	}
}

// Renewals that only the check timer sees, twice in a row, mean
// notifications do not work here: the guard falls back to polling, like
// the reference. One such renewal can be a notification still in flight,
// and a notified renewal in between proves they work.
func TestGuardFallsBackToPolling(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	w := lease.NewWatcher(filepath.Join(dir, lease.FileName), 2*time.Second, t0)
	g := newGuard(w, 2*time.Second, 50*time.Millisecond, true, t0)
	if g.polling() {
		t.Fatal("polling although notifications are available")
	}
	if renewed, err := g.onTimer(t0.Add(time.Second)); renewed || err != nil || g.polling() {
		t.Fatalf("no change: renewed=%v err=%v polling=%v", renewed, err, g.polling())
	}
	writeLease(t, dir, "CCCCCCCC")
	if renewed, err := g.onTimer(t0.Add(1500 * time.Millisecond)); !renewed || err != nil || g.polling() {
		t.Fatalf("first miss: renewed=%v err=%v polling=%v", renewed, err, g.polling())
	}
	writeLease(t, dir, "DDDDDDDD")
	g.notified(t0.Add(1600 * time.Millisecond))
	if g.missed != 0 {
		t.Fatalf("a notified renewal left %d misses counted", g.missed)
	}
	writeLease(t, dir, "EEEEEEEE")
	if renewed, err := g.onTimer(t0.Add(2500 * time.Millisecond)); !renewed || err != nil || g.polling() {
		t.Fatalf("miss after a notified renewal: renewed=%v err=%v polling=%v", renewed, err, g.polling())
	}
	writeLease(t, dir, "FFFFFFFF")
	if renewed, err := g.onTimer(t0.Add(3500 * time.Millisecond)); !renewed || err != nil {
		t.Fatalf("renewal missed: renewed=%v err=%v", renewed, err)
	}
	if !g.polling() || g.pollC == nil || g.events != nil {
		t.Fatal("guard did not switch to polling")
	}
	g.ticker.Stop()
	// Without notifications at all it polls from the start.
	if g2 := newGuard(w, time.Second, 50*time.Millisecond, false, t0); !g2.polling() {
		t.Fatal("no notifications but not polling")
	} else {
		g2.ticker.Stop()
	}
}

// fakeClock records where the guard arms its check timer.
type fakeClock struct {
	at    time.Duration // the last arming, from its call's now
	moves int
}

func (c *fakeClock) C() <-chan time.Time   { return nil }
func (c *fakeClock) Reset(d time.Duration) { c.at = d }
func (c *fakeClock) Move(d time.Duration)  { c.at = d; c.moves++ }

// A notified renewal moves the check to the middle of its own window, so
// a steady host never lets the timer fire, and wakes the loop only when it
// is the first one; anything else leaves both. Once renewals stop, the
// checks at the middle and the end still come from the timer alone, and
// the end is expiry; a notification after the end tells the loop too.
func TestGuardRenewalMovesCheck(t *testing.T) {
	dir := t.TempDir()
	writeLease(t, dir, "AAAAAAAA")
	t0 := time.Now()
	w := lease.NewWatcher(filepath.Join(dir, lease.FileName), 4*time.Second, t0)
	g := newGuard(w, 4*time.Second, 50*time.Millisecond, true, t0)
	c := &fakeClock{}
	g.timer = c
	told := func() bool {
		select {
		case <-g.events:
			return true
		default:
			return false
		}
	}
	for i, v := range []string{"BBBBBBBB", "CCCCCCCC", "DDDDDDDD"} {
		writeLease(t, dir, v)
		at := t0.Add(time.Duration(i+1) * time.Second)
		g.notified(at)
		if c.moves != i+1 || c.at != 2*time.Second {
			t.Fatalf("renewal %d: check in %v after %d moves, want 2s after %d", i, c.at, c.moves, i+1)
		}
		if told() != (i == 0) {
			t.Fatalf("renewal %d: the loop was told %v, want only of the first", i, i != 0)
		}
		if renewed, err := g.onEvent(at); !renewed || err != nil {
			t.Fatalf("renewal %d: the loop sees renewed=%v err=%v", i, renewed, err)
		}
	}
	if g.notified(t0.Add(3500 * time.Millisecond)); c.moves != 3 || told() {
		t.Fatalf("event without a new value: %d moves or the loop told, want 3 and not", c.moves)
	}
	// Renewals stop at +3s: the middle check at +5s finds nothing and
	// sets the end, +7s, where the lease has expired.
	if renewed, err := g.onTimer(t0.Add(5 * time.Second)); renewed || err != nil || c.at != 2*time.Second {
		t.Fatalf("middle check: renewed=%v err=%v next in %v, want 2s", renewed, err, c.at)
	}
	if _, err := g.onTimer(t0.Add(7 * time.Second)); !errors.Is(err, lease.ErrExpired) {
		t.Fatalf("end check: %v, want expiry", err)
	}
	if g.notified(t0.Add(7500 * time.Millisecond)); !told() {
		t.Fatal("a notification after the window did not tell the loop")
	}
	if _, err := g.onEvent(t0.Add(7500 * time.Millisecond)); !errors.Is(err, lease.ErrExpired) {
		t.Fatalf("the loop after the window: %v, want expiry", err)
	}
	if g.polling() {
		t.Fatal("polling although every renewal was notified")
	}
}
