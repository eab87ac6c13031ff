package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run any command as a durable, stoppable execution",
		UsageText: "loki-supervise run [--execution-id UUID] [--workspace DIR] [--json] -- CMD ARGS...",
		Description: "The build machinery for an arbitrary command: allowlisted environment, record in\n" +
			"$LOKI_DATA_DIR/dashboard/builds/UUID/, output in runner.log, durable stop, descendant\n" +
			"cleanup. Without --execution-id a new UUID is minted and printed (stderr, or a JSON\n" +
			"line on stdout with --json) before the command starts.\n\n" +
			"The command's output goes to runner.log: --follow also prints it here as it comes\n" +
			"(or later: loki-supervise logs UUID). At the end one line on stderr says how it\n" +
			"ended, and the exit code is the command's own (128+N for signal N, 127 when it\n" +
			"could not be started). The record ends succeeded or failed (list, status).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "execution-id", Usage: "canonical `UUID` (default: a new one)"},
			&cli.StringFlag{Name: "workspace", Usage: "working `DIR` of the command (default: current directory)"},
			&cli.StringFlag{Name: "loki-dir", Usage: "loki state `DIR`: the runner's TMPDIR and caches (default: the run's own, in its record; never the workspace)"},
			&cli.BoolFlag{Name: "json", Usage: `print {"execution_id": UUID} on stdout`},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "print the command's output (runner.log) on stdout as it runs"},
		}, timeoutFlags...),
		Action: func(c *cli.Context) error {
			spec, err := execution.PrepareRun(execution.RunOptions{
				ExecutionID: c.String("execution-id"),
				Workspace:   c.String("workspace"),
				LokiDir:     c.String("loki-dir"),
				Args:        c.Args().Slice(),
				HardTimeout: seconds(c, "hard-timeout"),
				IdleTimeout: seconds(c, "idle-timeout"),
			})
			if err != nil {
				return exitcode.Usage(err)
			}
			if c.Bool("json") {
				b, _ := canonjson.Marshal(map[string]any{"execution_id": spec.ID.String()})
				fmt.Fprintf(os.Stdout, "%s\n", b)
			} else if c.String("execution-id") == "" {
				fmt.Fprintf(os.Stderr, "loki-supervise: execution %s\n", spec.ID)
			}
			if c.Bool("follow") && c.Bool("json") {
				return exitcode.Usage(fmt.Errorf("run: --follow with --json: stdout holds one or the other"))
			}
			var followed chan struct{}
			if c.Bool("follow") {
				followed = make(chan struct{})
				go func() {
					defer close(followed)
					followLog(c.Context, spec, os.Stdout)
				}()
			}
			err = supervise(c.Context, spec)
			if followed != nil {
				<-followed
			}
			if !c.Bool("json") {
				endLine(spec, c.Bool("follow"))
			}
			return err
		},
	}
}

// followLog copies runner.log to w from when the record exists until the
// execution has exited and the log is drained.
func followLog(ctx context.Context, spec execution.Spec, w io.Writer) {
	for {
		if _, err := spec.Store.Read(spec.ID); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = execution.CopyLog(ctx, spec.Store, spec.ID, w, true, 50*time.Millisecond)
}

// endLine tells a person how the run ended, so that a run whose output
// went to its log does not look as if nothing happened.
func endLine(spec execution.Spec, followed bool) {
	st, err := spec.Store.Read(spec.ID)
	if err != nil {
		return
	}
	reason := st.Str(state.FieldTerminationReason)
	if reason == "" || reason == "launch_failed" {
		return // the launch failure has said its own line
	}
	how := "exit ?"
	if code, ok := st.Int(state.FieldExitCode); ok {
		how = fmt.Sprintf("exit %d", code)
	} else if sig, ok := st.Int(state.FieldSignal); ok {
		how = fmt.Sprintf("killed by signal %d", sig)
	}
	tail := ""
	if !followed {
		tail = "; output: loki-supervise logs " + spec.ID.String()
	}
	fmt.Fprintf(os.Stderr, "loki-supervise: execution %s %s (%s)%s\n", spec.ID, reason, how, tail)
}
