package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution"
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
			"line on stdout with --json) before the command starts.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "execution-id", Usage: "canonical `UUID` (default: a new one)"},
			&cli.StringFlag{Name: "workspace", Usage: "working `DIR` of the command (default: current directory)"},
			&cli.StringFlag{Name: "loki-dir", Usage: "loki state `DIR` (default: WORKSPACE/.loki)"},
			&cli.BoolFlag{Name: "json", Usage: `print {"execution_id": UUID} on stdout`},
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
			return supervise(c.Context, spec)
		},
	}
}
