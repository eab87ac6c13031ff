package lease

import (
	"testing"
	"time"
)

// TestStartSchedule: without a read notification the start-up renewals
// back off from firstRenew to the cap; with one the timer waits a poll
// interval first; once the read was seen, or the start-up phase is over,
// every renewal is the renew interval apart.
func TestStartSchedule(t *testing.T) {
	cfg := Timing{Duration: 5 * time.Second, Renew: time.Second, Poll: 100 * time.Millisecond}
	now := time.Now()
	s := NewSchedule(cfg, now, false)
	var got []time.Duration
	for range 8 {
		got = append(got, s.Next(now))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 50, 50}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("backoff %v, want %v ms", got, want)
		}
	}
	if d := s.Next(now.Add(fastFor)); d != time.Second {
		t.Fatalf("after start-up: %v, want the renew interval", d)
	}
	w := NewSchedule(cfg, now, true)
	if d := w.Next(now); d != 100*time.Millisecond {
		t.Fatalf("watching: first fallback after %v, want the poll interval", d)
	}
	w.Done()
	if d := w.Next(now); d != time.Second {
		t.Fatalf("after the read: %v, want the renew interval", d)
	}
	short := NewSchedule(Timing{Duration: time.Second, Renew: 200 * time.Millisecond, Poll: time.Second}, now, false)
	if d := short.Next(now.Add(600 * time.Millisecond)); d != 200*time.Millisecond {
		t.Fatalf("start-up phase must end at half a short lease: %v", d)
	}
}

// A host that expects a read notification and never gets one renews every
// poll interval during start-up (pid1test renews so), then every renew
// interval.
func TestScheduleWithoutTheNotification(t *testing.T) {
	now := time.Now()
	s := NewSchedule(Timing{Duration: 5 * time.Second, Renew: 100 * time.Millisecond, Poll: 100 * time.Millisecond}, now, true)
	for i := range 5 {
		if d := s.Next(now); d != 100*time.Millisecond {
			t.Fatalf("renewal %d after %v, want the poll interval", i, d)
		}
	}
	long := NewSchedule(Timing{Duration: 3 * time.Second, Renew: time.Second, Poll: 100 * time.Millisecond}, now, true)
	if d := long.Next(now); d != 100*time.Millisecond {
		t.Fatalf("start-up renewal after %v", d)
	}
	if d := long.Next(now.Add(1500 * time.Millisecond)); d != time.Second {
		t.Fatalf("after half the lease: %v, want the renew interval", d)
	}
}

// Run renews at once on the init's baseline read (once: later reads are
// not acted on), on the timer otherwise, and returns when stopped.
func TestScheduleRun(t *testing.T) {
	s := NewSchedule(Timing{Duration: time.Hour, Renew: time.Hour, Poll: time.Hour}, time.Now(), true)
	stop, reads := make(chan struct{}), make(chan struct{}, 1)
	renewed := make(chan struct{}, 10)
	released := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(stop, reads, func() { released++ }, func() { renewed <- struct{}{} })
	}()
	reads <- struct{}{}
	select {
	case <-renewed:
	case <-time.After(10 * time.Second):
		t.Fatal("no renewal after the baseline read")
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when stopped")
	}
	if released != 1 || len(renewed) != 0 {
		t.Fatalf("watch released %d times, %d extra renewals (the timer is an hour)", released, len(renewed))
	}
}
