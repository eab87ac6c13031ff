package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution"
	sandboxlandlock "github.com/loki-sh/loki/internal/execution/sandbox/landlock"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/landlock"
)

// timeoutFlags are shared by build and run.
var timeoutFlags = []cli.Flag{
	&cli.Float64Flag{Name: "hard-timeout", Usage: "stop the runner after `SECONDS` of wall-clock time (0 = never)"},
	&cli.Float64Flag{Name: "idle-timeout", Usage: "stop the runner when runner.log has not grown for `SECONDS` (0 = never)"},
}

func seconds(c *cli.Context, name string) time.Duration {
	return time.Duration(c.Float64(name) * float64(time.Second))
}

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "run one dashboard build (run.sh) as a durable, stoppable execution",
		UsageText: "loki-supervise build --execution-id UUID --run-sh PATH --workspace DIR --loki-dir DIR --spec FILE --provider NAME [--parallel]",
		Description: "Runs `run.sh --provider NAME [--parallel] SPEC` in WORKSPACE with an allowlisted\n" +
			"environment, records every transition in $LOKI_DATA_DIR/dashboard/builds/UUID/state.json\n" +
			"(output in runner.log), acts on `loki-supervise stop UUID`, and on exit stops leftover\n" +
			"descendants and binds the proof receipt. Exit status: the runner's code, 128+N for a\n" +
			"signal, 127 when it could not be launched, 2 for bad arguments.\n\n" +
			"With --print-profile nothing runs and no record is made: the macOS Seatbelt profile this\n" +
			"build would apply under LOKI_HOST_SEATBELT=1 is printed on stdout, from the host boundary\n" +
			"variables (docs/macos.md). It works on any system, so a sandbox can be inspected and\n" +
			"diffed before it is armed; exit 2 names the boundary variable that is wrong.\n\n" +
			"With --print-landlock, likewise, the Linux Landlock ruleset this build would run under\n" +
			"with LOKI_HOST_LANDLOCK=1 is printed as JSON (docs/executions.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "execution-id", Required: true, Usage: "canonical `UUID` naming the execution"},
			&cli.StringFlag{Name: "run-sh", Required: true, Usage: "`PATH` of the engine's run.sh"},
			&cli.StringFlag{Name: "workspace", Required: true, Usage: "`DIR` the build works in"},
			&cli.StringFlag{Name: "loki-dir", Required: true, Usage: "the workspace's loki state `DIR` (state/, proofs/)"},
			&cli.StringFlag{Name: "spec", Required: true, Usage: "spec `FILE` given to run.sh"},
			&cli.StringFlag{Name: "provider", Required: true, Usage: "provider `NAME` passed to run.sh"},
			&cli.BoolFlag{Name: "parallel", Usage: "pass --parallel to run.sh"},
			&cli.BoolFlag{Name: "print-profile", Usage: "print the Seatbelt profile the build would apply, and run nothing"},
			&cli.BoolFlag{Name: "print-landlock", Usage: "print the Landlock ruleset the build would run under (JSON), and run nothing"},
		}, timeoutFlags...),
		Action: func(c *cli.Context) error {
			// urfave/cli stops at the first argument, so anything after it
			// (a --parallel too) would be dropped silently: refuse it.
			if err := noArgs(c); err != nil {
				return err
			}
			opts := execution.BuildOptions{
				ExecutionID: c.String("execution-id"),
				RunSh:       c.String("run-sh"),
				Workspace:   c.String("workspace"),
				LokiDir:     c.String("loki-dir"),
				Spec:        c.String("spec"),
				Provider:    c.String("provider"),
				Parallel:    c.Bool("parallel"),
				HardTimeout: seconds(c, "hard-timeout"),
				IdleTimeout: seconds(c, "idle-timeout"),
			}
			if c.Bool("print-profile") && c.Bool("print-landlock") {
				return usage("--print-profile and --print-landlock: print one at a time")
			}
			if c.Bool("print-profile") {
				return printProfile(c, opts)
			}
			if c.Bool("print-landlock") {
				return printLandlock(c, opts)
			}
			spec, err := execution.PrepareBuild(opts)
			if err != nil {
				return exitcode.Usage(err)
			}
			return supervise(c.Context, spec)
		},
	}
}

// printProfile renders the build's Seatbelt profile without running it or
// touching its record. A note on stderr says when the profile would not be
// in force, so nobody mistakes the printout for a confined build.
func printProfile(c *cli.Context, opts execution.BuildOptions) error {
	spec, err := execution.ResolveBuild(opts)
	if err != nil {
		return exitcode.Usage(err)
	}
	profile, err := seatbelt.Render(spec.Workspace, spec.RunSh, spec.SpecFile)
	if err != nil {
		return probeError(err)
	}
	switch {
	case runtime.GOOS != "darwin":
		fmt.Fprintln(c.App.ErrWriter, "loki-supervise: note: Seatbelt confines builds on macOS only; on "+runtime.GOOS+" this build would run unconfined")
	case !seatbelt.Armed():
		fmt.Fprintln(c.App.ErrWriter, "loki-supervise: note: "+seatbelt.EnvSeatbelt+" is off; this build would run unconfined")
	}
	_, err = c.App.Writer.Write(profile)
	return err
}

// printLandlock renders the build's Landlock ruleset without running it
// or touching its record, with a note on stderr when it would not be in
// force.
func printLandlock(c *cli.Context, opts execution.BuildOptions) error {
	spec, err := execution.ResolveBuild(opts)
	if err != nil {
		return exitcode.Usage(err)
	}
	store, err := state.DefaultStore()
	if err != nil {
		return exitcode.Usage(err)
	}
	ruleset, abi, err := sandboxlandlock.Render(spec.Workspace, spec.RunSh, spec.SpecFile, store.Path(spec.ID, state.LogFile))
	if err != nil {
		return probeError(err)
	}
	switch have := landlock.ABI(); {
	case runtime.GOOS != "linux":
		fmt.Fprintln(c.App.ErrWriter, "loki-supervise: note: Landlock confines builds on Linux only; on "+runtime.GOOS+" this build would be refused under "+sandboxlandlock.EnvLandlock)
	case have < sandboxlandlock.MinABI:
		fmt.Fprintf(c.App.ErrWriter, "loki-supervise: note: this kernel has Landlock ABI %d, below %d: this build would be refused under %s (shown at ABI %d)\n", have, sandboxlandlock.MinABI, sandboxlandlock.EnvLandlock, abi)
	case !sandboxlandlock.Armed():
		fmt.Fprintln(c.App.ErrWriter, "loki-supervise: note: "+sandboxlandlock.EnvLandlock+" is off; this build would run unconfined")
	}
	_, err = c.App.Writer.Write(ruleset)
	return err
}

// supervise runs spec to its end and turns the result into the exit code.
func supervise(ctx context.Context, spec execution.Spec) error {
	res, err := execution.Run(ctx, spec, execution.TimingFromEnv(), execution.Default())
	if err != nil {
		return exitcode.Refused(err)
	}
	return res.Outcome()
}
