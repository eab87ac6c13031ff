package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show one execution",
		UsageText: "loki-supervise status UUID [--json]",
		Description: "Shows the record of an execution. A running execution whose supervisor died (its pid\n" +
			"is gone or now belongs to another process) is shown as `running (supervisor lost)`, and as\n" +
			"`lost (supervisor lost, runner gone; ...)` once its runner died too; `stop` then ends it.\n" +
			"--json prints state.json plus the derived fields supervisor_alive and display_state.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the record as JSON"}},
		Action: func(c *cli.Context) error {
			store, id, trailing, err := oneID(c, "json")
			if err != nil {
				return err
			}
			st, err := store.Read(id)
			if err != nil {
				return readErr(id, err)
			}
			v := execution.Describe(st)
			if c.Bool("json") || trailing["json"] {
				b, err := canonjson.MarshalIndent(v.JSON())
				if err != nil {
					return exitcode.Failed(err)
				}
				fmt.Fprintf(c.App.Writer, "%s\n", b)
				return nil
			}
			printStatus(c.App.Writer, v)
			return nil
		},
	}
}

func printStatus(w io.Writer, v execution.View) {
	st := v.State
	line := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "%-10s %s\n", k, val)
		}
	}
	line("execution", st.Str(state.FieldExecutionID))
	line("state", v.Display)
	if pid, ok := st.Int(state.FieldRunnerPID); ok {
		line("runner", fmt.Sprintf("pid %d (session and group leader)", pid))
	}
	line("started", st.Str(state.FieldStartedAt))
	line("exited", st.Str(state.FieldExitedAt))
	if code, ok := st.Int(state.FieldExitCode); ok {
		line("exit", fmt.Sprintf("code %d", code))
	} else if sig, ok := st.Int(state.FieldSignal); ok {
		line("exit", fmt.Sprintf("signal %d", sig))
	}
	line("run id", st.Str(state.FieldRunID))
	line("deadline", st.Str(state.FieldDeadlineReason))
	line("stop", st.Str(state.FieldStopRequestedAt))
	line("signalled", st.Str(state.FieldStopSignalSentAt))
	line("stop error", st.Str(state.FieldStopError))
	line("launch", st.Str(state.FieldLaunchError))
	line("log", st.Str(state.FieldRunnerLog))
}
