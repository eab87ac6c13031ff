//go:build unix

package session

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/pid1/facts"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/status"
)

// TestEndReason: each way a session ends has its one reason; the EOF
// rule's ends are told by the time from host stdin's EOF to the exit.
func TestEndReason(t *testing.T) {
	told := func(o *outcome, e facts.End) { o.told.Ended, o.told.End = true, e }
	eofAt := func(o *outcome, before time.Duration) {
		o.rule = EOFEnd
		o.eofAt.Store(int64(o.exitAt-before) + 1)
	}
	cases := []struct {
		name string
		set  func(o *outcome)
		err  error
		want status.Reason
	}{
		{"never ran", func(o *outcome) {}, exitcode.NotLaunched(errors.New("x")), status.RefusedStart},
		{"peer exit", func(o *outcome) { o.exit.Code = 3 }, exitcode.Exited(3), status.PeerExit},
		{"idle peer cut at EOF", func(o *outcome) { eofAt(o, time.Second) }, nil, status.EOFEnded},
		{"peer done before the window", func(o *outcome) { eofAt(o, 300*time.Millisecond) }, nil, status.PeerExit},
		{"writer cut at EOF", func(o *outcome) { o.exit.Code = 125; eofAt(o, 1100*time.Millisecond) }, exitcode.Exited(125), status.EOFCutOutput},
		{"EOF with the wait rule", func(o *outcome) { eofAt(o, 2*time.Second); o.rule = EOFWait }, nil, status.PeerExit},
		{"init refused", func(o *outcome) { o.exit.Code = 125 }, exitcode.Exited(125), status.Refused},
		{"lease", func(o *outcome) { o.exit.Code = 124 }, exitcode.Exited(124), status.LeaseExpired},
		{"forwarded", func(o *outcome) { o.exit.Code = 125; o.forwarded = syscall.SIGINT }, exitcode.Signalled(2, nil), status.SupervisorSignal},
		{"pids", func(o *outcome) { o.exit.Limit = fmt.Errorf("%w", confine.ErrPidsLimit) }, exitcode.Refused(nil), status.LimitPids},
		{"memory", func(o *outcome) { o.exit.Limit = fmt.Errorf("%w", confine.ErrMemoryLimit) }, exitcode.Signalled(9, nil), status.LimitMemory},
		{"none cut", func(o *outcome) { o.exit.Signal = 9; o.cut.ended = true }, nil, status.EOFEnded},
		{"init killed", func(o *outcome) { o.exit.Signal = 9 }, exitcode.Refused(nil), status.PeerSignal},
		{"stdin relay failed", func(o *outcome) {}, exitcode.Refused(errors.New("relay")), status.InputLost},
		// The init's facts decide where the code and the timing cannot.
		{"told: idle peer ended, early", func(o *outcome) { eofAt(o, 300*time.Millisecond); told(o, facts.End{Class: facts.EOFEnded}) }, nil, status.EOFEnded},
		{"told: own exit at the window's end", func(o *outcome) { eofAt(o, time.Second); told(o, facts.End{Class: facts.Exit}) }, nil, status.PeerExit},
		{"told: held output near the window", func(o *outcome) {
			o.exit.Code = 125
			eofAt(o, 1100*time.Millisecond)
			told(o, facts.End{Class: facts.OutputHeld})
		}, exitcode.Exited(125), status.OutputHeld},
		{"told: lost output", func(o *outcome) { o.exit.Code = 125; told(o, facts.End{Class: facts.OutputLost}) }, exitcode.Exited(125), status.OutputLost},
		{"told: peer killed", func(o *outcome) { o.exit.Code = 125; told(o, facts.End{Class: facts.PeerSignaled, Signal: 9}) }, exitcode.Exited(125), status.PeerSignal},
		{"told, but the limit is the fact", func(o *outcome) {
			o.exit.Code = 125
			o.exit.Limit = fmt.Errorf("%w", confine.ErrMemoryLimit)
			told(o, facts.End{Class: facts.PeerSignaled, Signal: 9})
		}, exitcode.Signalled(9, nil), status.LimitMemory},
	}
	for _, c := range cases {
		o := newOutcome(nil)
		if c.want != status.RefusedStart {
			o.ran = o.t0
			o.waitedFor(Exit{}, 0, 0)
			o.exitAt = 5 * time.Second
		}
		c.set(o)
		if got := o.end(c.err).Reason; got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
