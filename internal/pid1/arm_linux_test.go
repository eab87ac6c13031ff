package pid1

import (
	"testing"
	"time"
)

// A renewal the host made between Arm (the stage's baseline) and Run is
// the first renewal: notified, and counted. Without Arm the same value
// would be Run's baseline and count for nothing.
func TestArmedBaselineCountsTheRenewalBeforeRun(t *testing.T) {
	for _, armed := range []bool{true, false} {
		dir := t.TempDir()
		writeLease(t, dir, "AAAAAAAA")
		cfg := Config{ControlDir: dir, LeaseDuration: 5 * time.Second}.withDefaults()
		if armed {
			cfg.Armed = Arm(cfg)
		}
		writeLease(t, dir, "BBBBBBBB")
		l := newLoop(cfg, signals{})
		if armed {
			select {
			case <-l.g.events:
			case <-time.After(5 * time.Second):
				t.Fatal("armed: the renewal before Run was not notified")
			}
		}
		renewed, err := l.g.onEvent(time.Now())
		l.watch.stop()
		if err != nil || renewed != armed {
			t.Fatalf("armed %v: renewed %v, err %v", armed, renewed, err)
		}
	}
}

// Armed for another control dir (or lease duration) is not used: Run
// takes its own baseline, so the stale value there counts for nothing.
func TestArmedForAnotherDirIsIgnored(t *testing.T) {
	other, dir := t.TempDir(), t.TempDir()
	writeLease(t, other, "AAAAAAAA")
	writeLease(t, dir, "CCCCCCCC")
	for _, a := range []Config{
		{ControlDir: other, LeaseDuration: 5 * time.Second},
		{ControlDir: dir, LeaseDuration: 4 * time.Second},
	} {
		cfg := Config{ControlDir: dir, LeaseDuration: 5 * time.Second}.withDefaults()
		cfg.Armed = Arm(a.withDefaults())
		writeLease(t, other, "BBBBBBBB")
		l := newLoop(cfg, signals{})
		renewed, err := l.g.onEvent(time.Now())
		l.watch.stop()
		if err != nil || renewed {
			t.Fatalf("armed for %+v: renewed %v, err %v", a, renewed, err)
		}
		if l.g.w.Renewals() != 0 || l.g.w.Observe(time.Now()) {
			t.Fatalf("armed for %+v: the stale lease counted", a)
		}
	}
}
