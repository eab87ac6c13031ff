package deadline

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/lineage"
)

const (
	refreshEvery = 200 * time.Millisecond // lineage refresh and idle check
	drainFor     = 2 * time.Second        // output drain after the lineage stopped
)

// Stdio is where the command's input comes from and its output goes.
type Stdio struct {
	Stdin          *os.File // passed to the command as is; nil = /dev/null
	Stdout, Stderr io.Writer
}

// Command is what to run under the deadlines.
type Command struct {
	Args []string
	Dir  string
	Env  []string // complete environment; ControlEnv is removed from it
}

// Run runs c under cfg and returns nil for exit 0 or an outcome of package
// exitcode (see the package doc).
func Run(cfg Config, c Command, io Stdio) error {
	if err := cfg.Validate(); err != nil {
		return exitcode.Usage(err)
	}
	if len(c.Args) == 0 {
		return exitcode.Usage(fmt.Errorf("%w: no command given (use -- CMD ...)", ErrUsage))
	}
	if cfg.ControlFile != "" {
		ctl, err := createControl(cfg.ControlFile)
		if err != nil {
			return exitcode.Refused(err)
		}
		defer ctl.remove()
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Notified, SIGPIPE no longer kills us on a broken stdout: the write
	// returns EPIPE and we stop the lineage. Not ignored, so the command
	// still starts with the default disposition.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	defer signal.Stop(pipes)

	s := &session{cfg: cfg, out: &sink{w: io.Stdout}, errs: &sink{w: io.Stderr}, relay: newRelay()}
	if err := s.start(c, io.Stdin); err != nil {
		return err
	}
	defer s.r.Close()
	return s.supervise(sigs)
}

// session is one supervised command.
type session struct {
	cfg        Config
	out, errs  *sink
	relay      *relay
	r          *lineage.Runner
	stopResult lineage.Outcome
}

func (s *session) start(c Command, stdin *os.File) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return exitcode.Refused(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return exitcode.Refused(err)
	}
	r, err := lineage.Start(lineage.Command{
		Args: c.Args, Dir: c.Dir, Env: withoutControl(c.Env),
		Stdin: stdin, Stdout: outW, Stderr: errW,
	})
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return lineage.LaunchError(err)
	}
	s.r = r
	s.relay.pump(outR, s.out)
	s.relay.pump(errR, s.errs)
	return nil
}

// supervise waits for the first of: the command's exit, a deadline, a
// signal, a broken output, a tracking failure.
func (s *session) supervise(sigs <-chan os.Signal) error {
	hard := time.NewTimer(s.cfg.Hard.Duration())
	defer hard.Stop()
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.r.Done():
			return s.finished()
		case <-hard.C:
			return s.expire("hard_timeout")
		case sig := <-sigs:
			s.stop()
			return exitcode.Signalled(int(sig.(syscall.Signal)), nil)
		case <-s.relay.broken:
			s.stop()
			if err, _ := s.relay.failure.Load().(error); err != nil {
				return exitcode.Refused(fmt.Errorf("writing output: %w", err))
			}
			return exitcode.Signalled(int(syscall.SIGPIPE), nil)
		case <-tick.C:
			if err := s.r.Refresh(); err != nil {
				s.stop()
				return exitcode.Refused(err)
			}
			if idle := s.cfg.Idle.Duration(); idle > 0 && s.relay.idleFor() >= idle {
				return s.expire("idle_timeout")
			}
		}
	}
}

// expire reports the deadline, stops everything and drains the output.
func (s *session) expire(reason string) error {
	s.errs.line(s.cfg.event(reason))
	s.stop()
	s.relay.drain(drainFor)
	return exitcode.Timeout(nil)
}

// stop ends the whole lineage, the command included, within the grace.
func (s *session) stop() {
	s.stopResult = s.r.Reconcile(s.cfg.Grace.Duration())
}

// finished handles the command's own exit: leftovers are stopped and turn
// the exit into 125; otherwise its status is passed on.
func (s *session) finished() error {
	out := s.r.Reconcile(s.cfg.Grace.Duration())
	drained := s.relay.drain(drainFor)
	select {
	case <-s.relay.broken:
		if err, _ := s.relay.failure.Load().(error); err == nil {
			return exitcode.Signalled(int(syscall.SIGPIPE), nil)
		}
	default:
	}
	switch {
	case out.Error != "":
		return exitcode.Refused(fmt.Errorf("descendant check failed: %s", out.Error))
	case out.Detected:
		return exitcode.Refused(leftovers(out))
	case !drained:
		return exitcode.Refused(fmt.Errorf("output still held %v after the command exited", drainFor))
	}
	code, sig := s.r.Status()
	if err := exitcode.Wait(code, sig); exitcode.Code(err) != 0 {
		return err
	}
	return nil
}

// leftovers describes what was found after the command exited.
func leftovers(out lineage.Outcome) error {
	seen := map[int]bool{}
	for _, pid := range append(append([]int{}, out.TermSent...), out.KillSent...) {
		seen[pid] = true
	}
	if !out.Quiescent {
		return fmt.Errorf("%w: %d signalled, still running: %v", ErrLeftovers, len(seen), out.RemainingPIDs)
	}
	return fmt.Errorf("%w: %d stopped", ErrLeftovers, len(seen))
}

func withoutControl(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, ControlEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}
