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
