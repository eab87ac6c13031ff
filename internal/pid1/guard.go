package pid1

import (
	"sync"
	"time"

	"github.com/loki-sh/loki/internal/lease"
)

// guard enforces the lease. Renewals are learnt from change notifications
// (inotify on Linux) when they work, and a check timer re-reads the file
// half-way through the newest renewal's window and at its end, so a
// notification that never comes costs at most a late observation, never a
// false expiry, and a lapse is always seen by the timer, never left to
// notifications. Each notified renewal moves the timer (a timerfd: one raw
// system call, no wakeup), so a host renewing more often than every half
// window never lets it fire. A runtime timer (no timerfd) is not moved,
// since a runtime timer moved later still wakes the poller at its old
// deadline: it fires at the check point it was set for, then is set from
// the newest renewal. If two checks in a row find a renewal the
// notifications missed (one can be a notification still in flight), the
// guard stops trusting them and polls at the poll interval instead, like
// the reference. Every wake re-reads the file and applies Contract 1: only
// 8 bytes that differ from the last accepted value count.
//
// Notifications are handled on the watch's own goroutine (notified), and
// the loop hears of them only when it must act: the first renewal, or an
// expiry. A steady host then wakes one thread per renewal, the poller's;
// a send to the loop made the runtime wake a second thread for its idle P
// on every renewal. mu guards what both goroutines touch: the watcher,
// the missed count and the timer's arming. The rest is the loop's.
type guard struct {
	mu       sync.Mutex
	w        *lease.Watcher
	duration time.Duration
	interval time.Duration
	notify   chan struct{}   // to the loop: a first renewal or an expiry was notified
	events   <-chan struct{} // notify while notifications are trusted, else nil
	timer    checkClock
	ticker   *time.Ticker
	pollC    <-chan time.Time
	missed   int // consecutive checks that found a renewal not notified
}

// newGuard starts the check timer; notifying says whether notifications
// are available (else the guard polls from the start).
func newGuard(w *lease.Watcher, duration, interval time.Duration, notifying bool, now time.Time) *guard {
	g := &guard{w: w, duration: duration, interval: interval, notify: make(chan struct{}, 1)}
	g.events = g.notify
	g.timer = newCheckClock(g.nextCheck(now))
	if !notifying {
		g.startPolling()
	}
	return g
}

// nextCheck is the wait until the next re-read: the middle of the window,
// then its end.
func (g *guard) nextCheck(now time.Time) time.Duration {
	deadline := g.w.Deadline()
	mid := deadline.Add(-g.duration / 2)
	if now.Before(mid) {
		return mid.Sub(now)
	}
	if d := deadline.Sub(now); d > 0 {
		return d
	}
	return 0
}

func (g *guard) startPolling() {
	if g.ticker != nil {
		return
	}
	g.events = nil
	g.ticker = time.NewTicker(g.interval)
	g.pollC = g.ticker.C
}

// polling reports whether the guard fell back to the poll interval.
func (g *guard) polling() bool { return g.ticker != nil }

// observe re-reads the lease. It reports a renewal, or lease.ErrExpired once
// the window passed without one.
func (g *guard) observe(now time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.observeLocked(now)
}

func (g *guard) observeLocked(now time.Time) (bool, error) {
	renewed := g.w.Observe(now)
	if err := g.w.Check(now); err != nil {
		return false, err
	}
	return renewed, nil
}

// notified handles a notification naming the lease, on the watch's
// goroutine: notifications work, whatever a check timer saw before. A
// renewal moves the check to the middle of its new window. The loop is
// told of the first renewal (launch input waits for it) and of an expiry.
func (g *guard) notified(now time.Time) {
	g.mu.Lock()
	renewed, err := g.observeLocked(now)
	if renewed {
		g.missed = 0
		g.timer.Move(g.nextCheck(now))
	}
	tell := err != nil || renewed && g.w.Renewals() == 1
	g.mu.Unlock()
	if tell {
		wake(g.notify)
	}
}

// onEvent is the loop's side of a notification: whether the lease was
// renewed since the init started, or lease.ErrExpired.
func (g *guard) onEvent(now time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.w.Check(now); err != nil {
		return false, err
	}
	return g.w.Renewals() > 0, nil
}

// onTimer handles the check timer: a renewal found here was missed by the
// notifications.
func (g *guard) onTimer(now time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	renewed, err := g.observeLocked(now)
	if err != nil {
		return false, err
	}
	if renewed && !g.polling() {
		if g.missed++; g.missed >= 2 {
			g.startPolling()
		}
	}
	if !renewed {
		g.missed = 0
	}
	g.timer.Reset(g.nextCheck(now))
	return renewed, nil
}

// lost is called when the notification source died (watch removed).
func (g *guard) lost() { g.startPolling() }

// wake sends a coalesced event: a wake already pending re-reads the file.
func wake(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// checkClock is the guard's one-shot check timer.
type checkClock interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	// Move re-arms the timer d from now where that costs no wakeup,
	// and otherwise leaves it as it is.
	Move(d time.Duration)
}

// runtimeClock is a check timer on the runtime's timers. It does not
// move: a runtime timer moved later still wakes the poller at its old
// deadline.
type runtimeClock struct{ t *time.Timer }

func (c runtimeClock) C() <-chan time.Time   { return c.t.C }
func (c runtimeClock) Reset(d time.Duration) { c.t.Reset(d) }
func (c runtimeClock) Move(time.Duration)    {}
