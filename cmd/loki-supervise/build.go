package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/exitcode"
)

// timeoutFlags are shared by build and run.
var timeoutFlags = []cli.Flag{
	&cli.Float64Flag{Name: "hard-timeout", Usage: "stop the runner after `SECONDS` of wall-clock time (0 = never)"},
	&cli.Float64Flag{Name: "idle-timeout", Usage: "stop the runner when runner.log has not grown for `SECONDS` (0 = never)"},
}

func seconds(c *cli.Context, name string) time.Duration {
	return time.Duration(c.Float64(name) * float64(time.Second))
}

func init() {
	register(&cli.Command{
		Name:      "build",
		Usage:     "run one dashboard build (run.sh) as a durable, stoppable execution",
		UsageText: "loki-supervise build --execution-id UUID --run-sh PATH --workspace DIR --loki-dir DIR --spec FILE --provider NAME [--parallel]",
		Description: "Runs `run.sh --provider NAME [--parallel] SPEC` in WORKSPACE with an allowlisted\n" +
			"environment, records every transition in $LOKI_DATA_DIR/dashboard/builds/UUID/state.json\n" +
			"(output in runner.log), acts on `loki-supervise stop UUID`, and on exit stops leftover\n" +
			"descendants and binds the proof receipt. Exit status: the runner's code, 128+N for a\n" +
			"signal, 127 when it could not be launched, 2 for bad arguments.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "execution-id", Required: true, Usage: "canonical `UUID` naming the execution"},
			&cli.StringFlag{Name: "run-sh", Required: true, Usage: "`PATH` of the engine's run.sh"},
			&cli.StringFlag{Name: "workspace", Required: true, Usage: "`DIR` the build works in"},
			&cli.StringFlag{Name: "loki-dir", Required: true, Usage: "the workspace's loki state `DIR` (state/, proofs/)"},
			&cli.StringFlag{Name: "spec", Required: true, Usage: "spec `FILE` given to run.sh"},
			&cli.StringFlag{Name: "provider", Required: true, Usage: "provider `NAME` passed to run.sh"},
			&cli.BoolFlag{Name: "parallel", Usage: "pass --parallel to run.sh"},
		}, timeoutFlags...),
		Action: func(c *cli.Context) error {
			spec, err := execution.PrepareBuild(execution.BuildOptions{
				ExecutionID: c.String("execution-id"),
				RunSh:       c.String("run-sh"),
				Workspace:   c.String("workspace"),
				LokiDir:     c.String("loki-dir"),
				Spec:        c.String("spec"),
				Provider:    c.String("provider"),
				Parallel:    c.Bool("parallel"),
				HardTimeout: seconds(c, "hard-timeout"),
				IdleTimeout: seconds(c, "idle-timeout"),
			})
			if err != nil {
				return exitcode.New(2, err)
			}
			return supervise(c.Context, spec)
		},
	})
}

// supervise runs spec to its end and turns the result into the exit code.
func supervise(ctx context.Context, spec execution.Spec) error {
	res, err := execution.Run(ctx, spec, execution.TimingFromEnv(), execution.Default())
	if err != nil {
		return exitcode.New(exitcode.Refused, err)
	}
	return exitcode.Silent(res.ExitCode())
}
