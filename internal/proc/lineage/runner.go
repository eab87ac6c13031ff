//go:build unix

package lineage

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// Command is what to run. Env is the complete environment (nothing is
// inherited); a nil Stdin reads /dev/null, a nil Stdout or Stderr discards.
type Command struct {
	Args           []string
	Dir            string
	Env            []string
	Stdin          *os.File
	Stdout, Stderr *os.File
	// Landlock, when set, is a ruleset descriptor (landlock.Ruleset.Create)
	// the exec gate enforces on itself right before it execs the runner;
	// the runner never starts if that fails. The caller keeps and closes it.
	Landlock *os.File
}

// Runner is a started, tracked runner and its lineage.
type Runner struct {
	cmd   *exec.Cmd
	id    procid.Identity
	pidfd int
	done  chan struct{}
	code  int
	sig   int
	tr    *tracker
	// keeper ends the lineage if this process dies first (nil: none).
	keeper *keeper

	// reapMu is held across the reap; a holder of it (Hold) knows the
	// runner's pid cannot be reused meanwhile.
	reapMu sync.Mutex
	reaped bool

	closeOnce sync.Once
}

// PID returns the runner's pid (also its pgid and sid).
func (r *Runner) PID() int { return r.id.PID() }

// Identity is the runner's identity, captured while it was held at the gate.
func (r *Runner) Identity() procid.Identity { return r.id }

// PidFD returns a pidfd for the runner held since its birth, or -1.
func (r *Runner) PidFD() int { return r.pidfd }

// Done is closed once the runner has exited and been reaped.
func (r *Runner) Done() <-chan struct{} { return r.done }

// Status returns, after Done, the exit code (signal 0) or the signal that
// killed the runner (code -1).
func (r *Runner) Status() (code int, signal int) {
	<-r.done
	return r.code, r.sig
}

// Token is the lineage token in the runner's environment (TokenEnv).
func (r *Runner) Token() string { return r.tr.token }

// Refresh updates the lineage. An error means the lineage can no longer be
// observed; the caller must stop the run and treat it as uncontained.
func (r *Runner) Refresh() error {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	_, err := r.tr.refresh()
	return err
}

// Members returns the identities found by the latest refresh, deepest first
// (the runner, while alive, is among them).
func (r *Runner) Members() []procid.Identity {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	out := make([]procid.Identity, 0, len(r.tr.last))
	for _, m := range r.tr.last {
		out = append(out, m.id)
	}
	return out
}

// Containment names what was in force, strongest first.
func (r *Runner) Containment() string {
	parts := []string{}
	if r.tr.group != nil {
		parts = append(parts, "cgroup-v2")
	}
	if r.tr.subreaper {
		parts = append(parts, "subreaper")
	} else {
		parts = append(parts, "session")
	}
	parts = append(parts, "lineage")
	if r.keeper != nil {
		parts = append(parts, "keeper")
	}
	return strings.Join(parts, "+")
}

// Close releases the pidfd and removes the runner's cgroup (killing what is
// still in it: nothing may outlive a closed runner's containment).
func (r *Runner) Close() error {
	r.closeOnce.Do(func() {
		r.tr.mu.Lock()
		defer r.tr.mu.Unlock()
		if g := r.tr.group; g != nil {
			if g.populated() {
				g.kill(schedulingMargin)
			}
			g.remove()
		}
		if r.pidfd >= 0 {
			closeFD(r.pidfd)
			r.pidfd = -1
		}
		r.keeper.release()
	})
	return nil
}

// Hold keeps the runner from being reaped until release is called and
// says whether it is still unreaped (alive, or a zombie): until then its
// pid, which is also its pgid, names no other process or group.
// procid.Group.Hold takes this. Where the exit cannot be awaited without
// reaping (no waitid WNOWAIT), alive only says it was not reaped yet.
func (r *Runner) Hold() (release func(), alive bool) {
	r.reapMu.Lock()
	return r.reapMu.Unlock, !r.reaped
}

// wait reaps the runner and records its status. It first waits for the
// exit without reaping, then reaps under reapMu, so a Hold in progress
// delays the reap instead of racing it.
func (r *Runner) wait() {
	defer close(r.done)
	held := awaitExit(r.cmd.Process.Pid)
	if held {
		r.reapMu.Lock()
	}
	_ = r.cmd.Wait()
	if !held {
		r.reapMu.Lock()
	}
	r.reaped = true
	r.reapMu.Unlock()
	ps := r.cmd.ProcessState
	if ps == nil {
		r.code, r.sig = -1, 0
		return
	}
	if sig, ok := signalOf(ps); ok {
		r.code, r.sig = -1, sig
		return
	}
	r.code = ps.ExitCode()
}

// sleepUntil sleeps d but not past deadline.
func sleepUntil(d time.Duration, deadline time.Time) {
	if left := time.Until(deadline); left < d {
		d = left
	}
	if d > 0 {
		time.Sleep(d)
	}
}
