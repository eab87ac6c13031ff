package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list recorded executions",
		UsageText: "loki-supervise list [--json]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array of records"}},
		Action: func(c *cli.Context) error {
			store, err := state.DefaultStore()
			if err != nil {
				return exitcode.Failed(err)
			}
			entries, err := store.List()
			if err != nil {
				return exitcode.Failed(err)
			}
			if c.Bool("json") {
				out := make([]any, 0, len(entries))
				for _, e := range entries {
					if e.Err != nil {
						out = append(out, map[string]any{state.FieldExecutionID: e.ID.String(), "error": e.Err.Error()})
						continue
					}
					out = append(out, execution.Describe(e.State).JSON())
				}
				b, err := canonjson.MarshalIndent(out)
				if err != nil {
					return exitcode.Failed(err)
				}
				fmt.Fprintf(c.App.Writer, "%s\n", b)
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EXECUTION\tSTATE\tSTARTED\tEXIT")
			for _, e := range entries {
				if e.Err != nil {
					fmt.Fprintf(tw, "%s\tunreadable\t\t\n", e.ID)
					continue
				}
				v := execution.Describe(e.State)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, v.Display, e.State.Str(state.FieldStartedAt), exitText(e.State))
			}
			return tw.Flush()
		},
	}
}

func exitText(st state.State) string {
	if code, ok := st.Int(state.FieldExitCode); ok {
		return fmt.Sprint(code)
	}
	if sig, ok := st.Int(state.FieldSignal); ok {
		return fmt.Sprintf("signal %d", sig)
	}
	return "-"
}
