package execution

import (
	"context"
	"errors"
	"fmt"

	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/execution/runnerenv"
	"github.com/loki-sh/loki/internal/execution/sandbox/harden"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/proof/treedigest"
	"github.com/loki-sh/loki/internal/safefile"
)

// Spec describes one supervised execution. Paths must already be resolved
// (ResolvePath).
type Spec struct {
	ID    state.ID
	Store *state.Store
	// Args is the runner argv before confinement.
	Args      []string
	Workspace string
	// LokiDir holds state/trust-run-id and proofs/<run-id>/proof.json,
	// and the runner's runtime dirs. Empty (a run without --loki-dir):
	// OwnLokiDir in the record, made by Run.
	LokiDir string
	// RunSh and Spec are given to the confinement profile (build only).
	RunSh, SpecFile string
	// Plain is a `run` of any command: no receipt is expected, so its
	// end is named by the command's own result (succeeded or failed),
	// never by the build's verification.
	Plain bool
	// HardTimeout (wall clock since start) and IdleTimeout (no growth of
	// runner.log) stop the runner like a stop request; 0 disables.
	HardTimeout, IdleTimeout time.Duration
}

// OwnLokiDir is, in a run's record dir, the loki dir of a run that names
// none (0700): the runner's TMPDIR, XDG and cache dirs and LOKI_DIR.
const OwnLokiDir = "loki"

// Timing holds the stop grace, poll interval and descendant grace.
type Timing struct {
	StopGrace, Poll, DescendantGrace time.Duration
}

// TimingFromEnv reads the LOKI_BUILD_* knobs, falling back to defaults.
func TimingFromEnv() Timing {
	return Timing{
		StopGrace:       stopGrace(),
		Poll:            positiveSeconds(EnvPoll, DefaultPoll),
		DescendantGrace: positiveSeconds(EnvDescendantGrace, DefaultDescendantGrace),
	}
}

// Result is the end of a supervised execution.
type Result struct {
	// Returncode is the runner's exit code, or -N for a death by signal N,
	// as the reference records it; Launched is false for launch_failed.
	Returncode int
	Launched   bool
	Reason     string
	// LaunchError is why the runner was not launched (launch_error).
	LaunchError string
}

// Outcome is the supervisor's own exit: the runner's code (capped at 255)
// or its signal, not launched when the runner never started.
func (r Result) Outcome() error {
	switch {
	case !r.Launched && r.LaunchError != "":
		return exitcode.NotLaunched(fmt.Errorf("runner not launched: %s", r.LaunchError))
	case !r.Launched:
		return exitcode.NotLaunched(nil)
	case r.Returncode < 0:
		return exitcode.Signalled(-r.Returncode, nil)
	}
	return exitcode.Exited(min(r.Returncode, 255))
}

// ExitCode is Outcome's exit code: the runner's, 128+N for signal N, 127.
func (r Result) ExitCode() int { return exitcode.Code(r.Outcome()) }

// Run supervises one execution to its end and writes every transition into
// the record. The error is non-nil only when the record itself could not
// be written (the run's outcome is in Result and in state.json).
func Run(ctx context.Context, s Spec, t Timing, d Deps) (Result, error) {
	if err := d.check(); err != nil {
		return Result{}, err
	}
	// Catch SIGTERM/SIGINT from the start: one that arrives while the
	// runner is being launched must stop it, not kill the supervisor and
	// orphan the runner.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if _, err := s.Store.Update(s.ID, map[string]any{
		state.FieldSupervisorPID:        os.Getpid(),
		state.FieldSupervisorBirthToken: ownToken(),
	}); err != nil {
		return Result{}, err
	}
	runDir := ""
	if s.LokiDir == "" {
		// The workspace is the caller's (a run from / made /.loki): the
		// runner's runtime dirs live with its record instead.
		runDir = s.Store.Path(s.ID, OwnLokiDir)
		if err := os.MkdirAll(runDir, 0o700); err != nil {
			return Result{}, fmt.Errorf("the run's own loki dir: %w", err)
		}
		s.LokiDir = runDir
	}
	resolveTools(s.Workspace, s.LokiDir)
	// The supervisor's environment may hold secrets the runner's
	// allowlist keeps out: keep /proc/<supervisor>/environ and fd closed
	// to a runner without CAP_SYS_PTRACE (every confined one).
	_ = harden.HideSelf()
	// A reused brownfield workspace may hold an older run id; only one
	// minted after this point may bind this execution's proof.
	baseline := readRunID(s.LokiDir)

	sv := &supervisor{spec: s, timing: t, deps: d, baseline: baseline, runDir: runDir}
	env, err := runnerenv.Build(s.Workspace, s.LokiDir)
	if err != nil {
		return sv.launchFailed(err)
	}
	r, err := sv.launch(runnerenv.List(env))
	if err != nil {
		return sv.launchFailed(err)
	}
	defer r.Close()
	return sv.supervise(ctx, r, sigs)
}

func (d Deps) check() error {
	if d.Spawner == nil || d.Proofs == nil || d.Digester == nil || d.Confiner == nil {
		return ErrNotWired
	}
	return nil
}

func ownToken() string {
	tok, _ := procid.BirthToken(os.Getpid())
	return tok
}

type supervisor struct {
	spec     Spec
	timing   Timing
	deps     Deps
	baseline string
	// runDir is the run's own loki dir in its record, "" when named.
	runDir string
	log    *os.File
	group  procid.Group
}

func (sv *supervisor) update(fields map[string]any) error {
	_, err := sv.spec.Store.Update(sv.spec.ID, fields)
	return err
}

// launch opens the log, confines and starts the runner. The log comes
// first: a Landlock ruleset names it (the runner reopens /dev/stdout).
func (sv *supervisor) launch(env []string) (Runner, error) {
	s := sv.spec
	log, err := s.Store.OpenLog(s.ID)
	if err != nil {
		return nil, err
	}
	c, err := sv.deps.Confiner.Confine(ConfineRequest{
		ExecutionDir: s.Store.Dir(s.ID), Args: s.Args, Workspace: s.Workspace, RunSh: s.RunSh, Spec: s.SpecFile,
		RunnerLog: s.Store.Path(s.ID, state.LogFile), RunDir: sv.runDir,
	})
	if err != nil {
		log.Close()
		return nil, err
	}
	if c.Landlock != nil {
		defer c.Landlock.Close() // the runner holds its own domain once started
	}
	if c.Record != nil {
		if err := sv.update(map[string]any{state.FieldConfinement: c.Record}); err != nil {
			log.Close()
			return nil, err
		}
	}
	r, err := sv.deps.Spawner.Start(Command{Args: c.Args, Dir: s.Workspace, Env: env, Stdout: log, Stderr: log, Landlock: c.Landlock})
	if err != nil {
		log.Close()
		return nil, err
	}
	sv.log = log
	return r, nil
}

func (sv *supervisor) launchFailed(cause error) (Result, error) {
	now := utcNow()
	err := sv.update(map[string]any{
		state.FieldState:             state.StateExited,
		state.FieldExitedAt:          now,
		state.FieldFinishedAt:        now,
		state.FieldReturncode:        nil,
		state.FieldExitCode:          nil,
		state.FieldSignal:            nil,
		state.FieldTerminationReason: "launch_failed",
		state.FieldLaunchError:       cause.Error(),
		state.FieldProof:             sv.deps.Proofs.Empty(sv.spec.ID.String(), "runner launch failed"),
	})
	return Result{Launched: false, Reason: "launch_failed", LaunchError: cause.Error()}, err
}

// running records the runner's identity. The ids come from the spawn: the
// runner was made session and group leader before exec, so they stay
// authoritative after it exits.
func (sv *supervisor) running(r Runner) error {
	pid := r.PID()
	token := r.Identity().Token()
	if token == "" {
		token, _ = procid.BirthToken(pid)
	}
	sv.group = procid.Group{PID: pid, PGID: pid, SID: pid, Token: token, Hold: r.Hold}
	fields := map[string]any{
		state.FieldState:            state.StateRunning,
		state.FieldStartedAt:        utcNow(),
		state.FieldRunnerPID:        pid,
		state.FieldRunnerPGID:       pid,
		state.FieldRunnerSID:        pid,
		state.FieldRunnerBirthToken: token,
		state.FieldRunnerLog:        sv.spec.Store.Path(sv.spec.ID, state.LogFile),
	}
	// The lineage token lets a later command find what is left if this
	// supervisor dies (Reclaim). Best effort: without it only the
	// runner's verified group can be reclaimed.
	if lt, ok := r.(interface{ Token() string }); ok && lt.Token() != "" {
		safefile.WriteAtomic(sv.spec.Store.Path(sv.spec.ID, state.LineageFile), []byte(lt.Token()), 0o600)
	}
	return sv.update(fields)
}

func (sv *supervisor) supervise(ctx context.Context, r Runner, sigs <-chan os.Signal) (Result, error) {
	if err := sv.running(r); err != nil {
		// Without a record nobody can stop it: do not leave it running.
		sv.group.Signal(syscall.SIGKILL)
		<-r.Done()
		sv.log.Close()
		return Result{}, err
	}
	loop := newStopLoop(sv, r)
	loopErr := loop.run(ctx, sigs)
	sv.log.Close()

	code, sig := r.Status()
	rc := code
	if sig > 0 {
		rc = -sig
	}
	res, err := sv.exited(r, rc, loop)
	if err == nil {
		err = loopErr
	}
	return res, err
}

// signalGroup sends sig to the verified group; the error text is what
// stop_error records. The record and the spawn must agree on who the
// runner is: if state.json now names another pid or birth token, the
// supervisor cannot tell which one is right and refuses (fail closed).
func (sv *supervisor) signalGroup(sig syscall.Signal) error {
	st, err := sv.spec.Store.Read(sv.spec.ID)
	if err != nil || !recordNames(st, sv.group) {
		return procid.ErrGroupRefused
	}
	return sv.group.Signal(sig)
}

func recordNames(st state.State, g procid.Group) bool {
	pid, ok1 := st.Int(state.FieldRunnerPID)
	pgid, ok2 := st.Int(state.FieldRunnerPGID)
	sid, ok3 := st.Int(state.FieldRunnerSID)
	return ok1 && ok2 && ok3 && pid == g.PID && pgid == g.PGID && sid == g.SID &&
		st.Str(state.FieldRunnerBirthToken) == g.Token
}

func (sv *supervisor) exited(r Runner, rc int, loop *stopLoop) (Result, error) {
	var desc lineage.Outcome
	if loop.lineageErr != "" {
		desc = lineage.EmptyOutcome()
		desc.Error = loop.lineageErr
	} else {
		desc = r.Reconcile(sv.timing.DescendantGrace)
	}
	id := sv.spec.ID.String()
	runID, tree, treeErr := "", "", ""
	var proof Proof
	if desc.Detected || desc.Error != "" {
		proof = sv.deps.Proofs.Empty(id, "proof not captured because runner descendants survived direct exit")
	} else {
		runID = loop.runID
		if runID == "" {
			if c := readRunID(sv.spec.LokiDir); c != "" && c != sv.baseline {
				runID = c
			}
		}
		// The exact proof is snapshotted first; the tree it must match is
		// derived from the workspace afterwards.
		proof = sv.deps.Proofs.Snapshot(ProofSource{
			ExecutionDir: sv.spec.Store.Dir(sv.spec.ID), ExecutionID: id, LokiDir: sv.spec.LokiDir, RunID: runID,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		var err error
		tree, err = sv.deps.Digester.TreeDigest(ctx, sv.spec.Workspace)
		cancel()
		if err != nil {
			tree, treeErr = "", digestFailure(err)
		}
		proof.Bind(runID, tree)
	}
	reason := terminationReason(desc, loop.stopSent, rc, proof, sv.spec.Plain)
	fields := map[string]any{
		state.FieldState:             state.StateExited,
		state.FieldReturncode:        rc,
		state.FieldExitCode:          nil,
		state.FieldSignal:            nil,
		state.FieldTerminationReason: reason,
		state.FieldRunID:             runID,
		state.FieldFinalTreeSHA256:   tree,
		state.FieldDescendants:       desc,
		state.FieldProof:             proof,
	}
	if treeErr != "" {
		fields[state.FieldFinalTreeError] = treeErr
	}
	if rc >= 0 {
		fields[state.FieldExitCode] = rc
	} else {
		fields[state.FieldSignal] = -rc
	}
	now := utcNow()
	fields[state.FieldExitedAt], fields[state.FieldFinishedAt] = now, now
	return Result{Returncode: rc, Launched: true, Reason: reason}, sv.update(fields)
}

// terminationReason applies the reference's precedence: descendants, then
// a stop that was actually sent, then a bound and completed proof, then
// the exit codes run.sh uses for "finished but not verified" (0, 20). A
// plain run ends succeeded or failed by its exit code instead.
func terminationReason(desc lineage.Outcome, stopped bool, rc int, proof Proof, plain bool) string {
	switch {
	case desc.Detected && desc.Quiescent:
		return "descendants_terminated"
	case desc.Detected:
		return "descendants_uncontained"
	case desc.Error != "":
		return "descendant_check_failed"
	case stopped:
		return "stopped"
	case plain && rc == 0:
		return "succeeded"
	case plain:
		return "failed"
	case rc == 0 && proof.Completed(rc):
		return "completed"
	case rc == 0 || rc == 20:
		return "verification_failed"
	}
	return "crashed"
}

// digestFailure is final_tree_error: why the workspace has no digest, in
// words of loki's own (never git's stderr or a path the runner chose).
func digestFailure(err error) string {
	switch {
	case errors.Is(err, treedigest.ErrTooLarge):
		return fmt.Sprintf("work tree over the digest bound (%d bytes of file content, %s): not bound", digestMaxBytes(), EnvDigestMaxBytes)
	case errors.Is(err, context.DeadlineExceeded):
		return "tree digest timed out: not bound"
	case errors.Is(err, treedigest.ErrGit):
		return "git failed on the work tree: not bound"
	}
	return "tree digest failed: not bound"
}
