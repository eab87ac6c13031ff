package lease

import "time"

// The host's renewal schedule, the one loki-supervise, the test harness
// (pid1test) and the benchmarks (bench/initbench) renew on. The init needs
// a renewal it observed after it started before it reads the prelude
// (Contract 1), and any wait for it is added to every session's start. So
// the host renews at once when it sees the init read its baseline
// (WatchReads): the init arms its watch before that read, so this one
// renewal is always noticed, and the writer had it staged, so it costs a
// rename and no disk flush while the session starts. The timer is the
// fallback: backing off from firstRenew up to poll/2 where there is no
// read notification, and from the init's poll interval (the cost of a
// lost notification, as for an init that polls) where there is one, until
// the read was seen. Then, and after fastFor, every renew interval.
const (
	firstRenew = time.Millisecond
	fastFor    = 2 * time.Second
)

// Schedule is the delay before each renewal: doubling from its first step
// to a cap of poll/2 while in the start-up phase, then the renew interval.
type Schedule struct {
	step, cap, interval time.Duration
	until               time.Time
}

// Timing is what the schedule is made from: the lease duration, the renew
// interval and the init's poll interval.
type Timing struct {
	Duration, Renew, Poll time.Duration
}

// NewSchedule starts at firstRenew, or at the poll interval when a read
// notification (watching) is expected to come first.
func NewSchedule(t Timing, now time.Time, watching bool) *Schedule {
	capStep := min(max(t.Poll/2, 5*time.Millisecond), t.Renew)
	first := min(firstRenew, capStep)
	if watching {
		first = min(max(t.Poll, firstRenew), t.Renew)
	}
	return &Schedule{
		step: first, cap: max(capStep, first), interval: t.Renew,
		until: now.Add(min(fastFor, t.Duration/2)),
	}
}

// Next is the delay before the next renewal.
func (s *Schedule) Next(now time.Time) time.Duration {
	if !now.Before(s.until) {
		return s.interval
	}
	d := s.step
	s.step = min(2*s.step, s.cap)
	return d
}

// Done ends the start-up phase (the init was seen reading its baseline).
func (s *Schedule) Done() { s.until = time.Time{} }

// Run renews (with renew) on the schedule until stop is closed. reads, nil
// when there is none, fires when the init read the lease: the first one is
// renewed at once and ends the start-up phase, and stopReads (may be nil)
// releases its watch, so renewal and observation never ping-pong.
func (s *Schedule) Run(stop, reads <-chan struct{}, stopReads func(), renew func()) {
	t := time.NewTimer(s.Next(time.Now()))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-reads:
			reads = nil
			if stopReads != nil {
				stopReads()
			}
			s.Done()
		case <-t.C:
		}
		renew()
		t.Reset(s.Next(time.Now()))
	}
}
