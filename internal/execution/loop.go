package execution

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/pycompat"
)

// Deadline reasons recorded in deadline_reason.
const (
	DeadlineHard = "hard_timeout"
	DeadlineIdle = "idle_timeout"
)

// stopLoop is the supervisor's poll loop while the runner lives. Its
// fields are what the exit path needs to know afterwards.
type stopLoop struct {
	sv *supervisor
	r  Runner

	started      time.Time
	lastGrowth   time.Time
	lastLogSize  int64
	received     os.Signal
	lineageErr   string
	runID        string
	deadline     string
	stopSent     bool
	stopSentAt   time.Time
	stopRefused  bool
	killSent     bool
	firstFailure error // first record write that failed
}

func newStopLoop(sv *supervisor, r Runner) *stopLoop {
	now := time.Now()
	return &stopLoop{sv: sv, r: r, started: now, lastGrowth: now}
}

func (l *stopLoop) record(fields map[string]any) {
	if err := l.sv.update(fields); err != nil && l.firstFailure == nil {
		l.firstFailure = err
	}
}

// run polls until the runner has exited and been reaped.
func (l *stopLoop) run(ctx context.Context, sigs <-chan os.Signal) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		select {
		case <-l.r.Done():
			return l.firstFailure
		default:
		}
		l.tick()
		timer.Reset(l.sv.timing.Poll)
		select {
		case <-l.r.Done():
		case s := <-sigs:
			l.received = s
		case <-ctx.Done():
			if l.received == nil {
				l.received = syscall.SIGTERM
			}
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// tick is one pass of the reference loop: lineage refresh, run id
// detection, then at most one escalation step.
func (l *stopLoop) tick() {
	if l.lineageErr == "" {
		if err := l.r.Refresh(); err != nil {
			l.lineageErr = "Runner lineage tracking failed: " + pycompat.ErrorClass(err, "RuntimeError")
			l.record(map[string]any{state.FieldStopError: l.lineageErr})
		}
	}
	st, _ := l.sv.spec.Store.Read(l.sv.spec.ID)
	if l.runID == "" {
		if c := readRunID(l.sv.spec.LokiDir); c != "" && c != l.sv.baseline {
			l.runID = c
			l.record(map[string]any{state.FieldRunID: c})
		}
	}
	l.checkDeadlines()
	requested := st.Truthy(state.FieldStopRequestedAt) || l.received != nil || l.lineageErr != "" || l.deadline != ""
	switch {
	case requested && !l.stopSent && !l.stopRefused:
		if err := l.sv.signalGroup(syscall.SIGTERM); err != nil {
			l.record(map[string]any{state.FieldStopError: err.Error()})
			l.stopRefused = true
			return
		}
		l.stopSent, l.stopSentAt = true, time.Now()
		l.record(map[string]any{state.FieldStopSignalSentAt: utcNow()})
	case l.stopSent && !l.killSent && time.Since(l.stopSentAt) >= l.sv.timing.StopGrace:
		if err := l.sv.signalGroup(syscall.SIGKILL); err != nil {
			l.record(map[string]any{state.FieldStopError: err.Error()})
		}
		l.killSent = true
	}
}

// checkDeadlines fires at most one deadline per execution.
func (l *stopLoop) checkDeadlines() {
	if l.deadline != "" {
		return
	}
	s := l.sv.spec
	now := time.Now()
	if s.IdleTimeout > 0 && l.sv.log != nil {
		if fi, err := l.sv.log.Stat(); err == nil && fi.Size() != l.lastLogSize {
			l.lastLogSize, l.lastGrowth = fi.Size(), now
		}
	}
	switch {
	case s.HardTimeout > 0 && now.Sub(l.started) >= s.HardTimeout:
		l.deadline = DeadlineHard
	case s.IdleTimeout > 0 && now.Sub(l.lastGrowth) >= s.IdleTimeout:
		l.deadline = DeadlineIdle
	default:
		return
	}
	l.record(map[string]any{state.FieldDeadlineReason: l.deadline, state.FieldDeadlineAt: utcNow()})
}
