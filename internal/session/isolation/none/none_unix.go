//go:build unix

package none

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/session"
)

// Start spawns the peer as a tracked lineage (see the package doc).
func (Backend) Start(req session.Request) (session.Process, error) {
	spec := req.Peer
	r, err := lineage.Start(lineage.Command{
		Args: spec.Argv, Dir: spec.Cwd, Env: spec.Environ(),
		Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("start the peer: %w", err)
	}
	p := &process{r: r, stop: make(chan struct{})}
	go p.follow()
	return p, nil
}

type process struct {
	r    *lineage.Runner
	stop chan struct{}

	mu       sync.Mutex
	trackErr error // the first refresh failure while the peer ran
}

// follow refreshes the lineage while the peer runs. A failure is kept: the
// run can no longer be called contained.
func (p *process) follow() {
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-p.r.Done():
			return
		case <-p.stop:
			return
		case <-t.C:
			if err := p.r.Refresh(); err != nil {
				p.mu.Lock()
				if p.trackErr == nil {
					p.trackErr = err
				}
				p.mu.Unlock()
			}
		}
	}
}

// Wait returns once the peer exited and its whole lineage is gone.
func (p *process) Wait() session.Exit {
	code, sig := p.r.Status()
	exit := session.Exit{Code: code, Signal: sig}
	if sig != 0 {
		exit.Code = 0
	}
	exit.Escaped = p.stopLineage()
	return exit
}

// stopLineage kills whatever the peer left behind. The peer's code stays
// the session's (as under loki-init, whose namespace dies with the peer):
// leftovers are not the peer's failure, but leftovers that could not be
// stopped or seen are the session's, and are reported.
func (p *process) stopLineage() error {
	p.mu.Lock()
	trackErr := p.trackErr
	p.mu.Unlock()
	if trackErr != nil {
		return fmt.Errorf("%w: %v", ErrEscaped, trackErr)
	}
	if err := p.r.Refresh(); err != nil {
		return fmt.Errorf("%w: %v", ErrEscaped, err)
	}
	if len(p.r.Members()) == 0 {
		// Nothing is left that could fork; Close still kills anything a
		// cgroup holds that no rule showed.
		return nil
	}
	// Grace 0: the peer is gone, and the namespace backend gives its
	// leftovers none either (the namespace dies with the peer).
	out := p.r.Reconcile(0)
	switch {
	case out.Error != "":
		return fmt.Errorf("%w: %s", ErrEscaped, out.Error)
	case len(out.RemainingPIDs) > 0:
		return fmt.Errorf("%w: pids %v still alive", ErrEscaped, out.RemainingPIDs)
	}
	return nil
}

// Signal forwards sig to every live member of the lineage, the peer first.
func (p *process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("unsupported signal %v", sig)
	}
	return p.signalAll(unix.Signal(s))
}

func (p *process) Kill() error { return p.signalAll(unix.SIGKILL) }

// signalAll signals the peer and then every other member found by a fresh
// refresh, each checked by identity first. A peer that is already gone is
// not an error: its leftovers are stopped by Wait.
func (p *process) signalAll(sig unix.Signal) error {
	lineage.Signal(p.r.Identity(), sig)
	if err := p.r.Refresh(); err != nil {
		return fmt.Errorf("%w: %v", ErrEscaped, err)
	}
	for _, id := range p.r.Members() {
		if id != p.r.Identity() {
			lineage.Signal(id, sig)
		}
	}
	return nil
}

// PeerPID is the peer's pid (it is the supervisor's child).
func (p *process) PeerPID() int { return p.r.PID() }

// Close releases the runner (its cgroup, killing anything still in it).
func (p *process) Close() error {
	close(p.stop)
	return p.r.Close()
}
