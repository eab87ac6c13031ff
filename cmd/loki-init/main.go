// Command loki-init is the trusted PID 1 of an agent's private PID
// namespace. It only parses flags and runs internal/pid1; every
// behaviour, stage and exit code is decided there. Started by the
// namespace backend with the hidden first argument stage.Command, it is
// that backend's stage first (package stage), which confines the process
// and hands back loki-init's own arguments: the same process then goes on
// as loki-init, still PID 1, without an exec.
//
//go:debug updatemaxprocs=0
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/loki-sh/loki/cmd/internal/version"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/pid1"
	_ "github.com/loki-sh/loki/internal/proc/sysmon/calm" // first, before the stage's work
	"github.com/loki-sh/loki/internal/session/isolation/namespace/stage"
)

const usage = `usage: loki-init [-lease-duration 5s] [-poll-interval 100ms] [-grace 10s] [-wait-after-eof] CONTROL_DIR
       loki-init --version [--json]

loki-init is the trusted PID 1 of an agent's private PID namespace: the host's
lease, not the agent, decides how long anything in the namespace may live.

Protocol, in order:
  1. It refuses to run unless it is PID 1, then makes itself non-dumpable.
  2. It waits for the host to renew CONTROL_DIR/lease (8 bytes, replaced
     atomically with a new value) after it started; a lease older than the
     init never counts.
  3. It reads exactly one launch prelude from stdin: a 4-byte big-endian
     length N (0 < N <= 1 MiB), then N bytes of JSON
     {"argv": [...], "cwd": "/abs", "env": {...}}. Nothing after it is read.
  4. It starts the peer in its own session on its own pipes and forwards
     stdin to it (closing the peer's stdin at EOF) and its stdout/stderr to
     fd 1/fd 2, byte for byte; it reaps every orphan.
  From step 2 on, a lease not renewed within -lease-duration exits 124.

Exit codes:
  0-255  the peer's own code, once all its output was delivered
         (0 as well when stdin reached EOF and the peer was still running
         one second later, unless it had already exited nonzero;
         with -wait-after-eof the peer runs on until it exits)
  124    the lease expired (at any stage)
  125    refused or failed: not PID 1, bad prelude, spawn failure, output
         lost or still held open 1 s after the peer exited, peer killed by
         a signal; a refusal prints one line to stderr:
         "ACP supervisor refused at <stage>: <class>" (never launch data)
  128+N  SIGTERM/SIGINT/SIGHUP (N) was forwarded to the peer's session and
         it was still running after -grace; everything was killed.
         A peer that exits within the grace gives its own outcome.

Flags:
`

func main() {
	args, scope := os.Args[1:], false
	var armed *pid1.Armed
	if len(args) > 0 && args[0] == stage.Command {
		// The first lease before the confinement: the host renews on
		// that read while the stage works (pid1.Arm).
		if _, argv, err := stage.ParseArgs(args[1:]); err == nil && len(argv) > 0 {
			if c, err := parse(argv[1:], io.Discard, io.Discard); err == nil {
				armed = pid1.Arm(c)
			}
		}
		var err error
		if args, scope, err = stage.Run(args[1:]); err != nil {
			os.Exit(exitcode.Code(err))
		}
	}
	cfg, err := parse(args, os.Stdout, os.Stderr)
	cfg.ScopeAbstractUnix = cfg.ScopeAbstractUnix || scope
	cfg.Armed = armed
	if err == nil {
		err = pid1.Run(cfg)
	}
	if r := exitcode.Report(err); r != nil {
		fmt.Fprintln(os.Stderr, r)
	}
	os.Exit(exitcode.Code(err))
}

// parse reads the flags. -h prints the help and exits 0; a usage error is a
// refusal at initialization (125), like every other reason not to start.
func parse(args []string, stdout, stderr io.Writer) (pid1.Config, error) {
	var cfg pid1.Config
	var showVersion, asJSON bool
	fs := flag.NewFlagSet("loki-init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.DurationVar(&cfg.LeaseDuration, "lease-duration", pid1.DefaultLeaseDuration, "exit 124 when the lease is not renewed for this long")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", pid1.DefaultPollInterval, "how often to re-read the lease when inotify cannot report renewals")
	fs.DurationVar(&cfg.Grace, "grace", pid1.DefaultGrace, "time the peer's session has to exit after a forwarded SIGTERM/SIGINT/SIGHUP")
	fs.IntVar(&cfg.StdinFD, "stdin-fd", 0, "the host passed its client's own stdin as this descriptor (and fd 1 is its own stdout; pipes or sockets): the peer gets both directly and fd 0 carries only the prelude (0: forward fd 0)")
	fs.BoolVar(&cfg.StderrDirect, "stderr-direct", false, "with -stdin-fd: fd 2 goes to the peer directly too")
	fs.BoolVar(&cfg.Seccomp, "seccomp", false, "install the session's syscall policy on every thread before anything else (the namespace stage does so itself)")
	fs.BoolVar(&cfg.ScopeAbstractUnix, "scope-abstract-unix", false, "keep the peer to its own abstract unix sockets (Landlock, where the kernel has the scope)")
	fs.IntVar(&cfg.PeerCgroupFD, "peer-cgroup-fd", 0, "the host passed the tasks file of the peer's own pids cgroup (v1) as this descriptor: the peer is born there and the init stays outside the limit, with no spare threads (0: the init shares the limit)")
	fs.BoolVar(&cfg.WaitAfterEOF, "wait-after-eof", false, "after stdin EOF, let the peer run until it exits (bounded by the lease) instead of ending the session 1 s later")
	fs.BoolVar(&showVersion, "version", false, "print the build (version, commit, Go, platform) and exit")
	fs.BoolVar(&asJSON, "json", false, "with -version: print it as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, exitcode.Exited(0)
		}
		return cfg, exitcode.Refused(&pid1.Refusal{Stage: pid1.StageInitialization, Err: pid1.ErrUsage})
	}
	if showVersion {
		v := version.Read("loki-init")
		if asJSON {
			fmt.Fprintln(stdout, v.JSON())
		} else {
			fmt.Fprintln(stdout, v)
		}
		return cfg, exitcode.Exited(0)
	}
	if fs.NArg() != 1 || cfg.LeaseDuration <= 0 || cfg.PollInterval <= 0 || cfg.Grace < 0 || (cfg.StdinFD != 0 && cfg.StdinFD < 3) || (cfg.PeerCgroupFD != 0 && cfg.PeerCgroupFD < 3) {
		fmt.Fprintln(stderr, "loki-init: expected one CONTROL_DIR and positive durations (-h for help)")
		return cfg, exitcode.Refused(&pid1.Refusal{Stage: pid1.StageInitialization, Err: pid1.ErrUsage})
	}
	cfg.ControlDir = fs.Arg(0)
	return cfg, nil
}
