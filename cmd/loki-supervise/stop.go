package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "ask a running execution to stop (durable: survives a restart of the caller)",
		UsageText: "loki-supervise stop UUID",
		Description: "Records stop_requested_at in the execution's state.json. Its supervisor then sends\n" +
			"SIGTERM to the runner's verified process group and SIGKILL after\n" +
			"LOKI_BUILD_STOP_GRACE_SECONDS (default 10). If that supervisor is dead (pid + birth\n" +
			"token), stop itself kills what is left of the run (every process carrying its lineage\n" +
			"token) and records it as exited (supervisor_lost). Exit 1 if the execution does not\n" +
			"exist or has already exited.",
		Action: func(c *cli.Context) error {
			store, id, _, err := oneID(c)
			if err != nil {
				return err
			}
			res, err := execution.RequestStop(store, id)
			switch {
			case errors.Is(err, execution.ErrAlreadyExited):
				return exitcode.Failed(err)
			case err != nil:
				return readErr(id, err)
			case res.AlreadyRequested:
				fmt.Fprintf(c.App.Writer, "stop already requested for %s at %s\n", id, res.RequestedAt)
			default:
				fmt.Fprintf(c.App.Writer, "stop requested for %s\n", id)
			}
			if !res.SupervisorAlive {
				// Nobody will act on the request: end what is left here.
				rec, err := execution.Reclaim(store, id)
				if err != nil {
					return exitcode.Failed(fmt.Errorf("the supervisor of %s is gone and its run could not be reclaimed: %w", id, err))
				}
				if rec.Recorded {
					fmt.Fprintf(c.App.Writer, "the supervisor of %s was gone: killed %d leftover process(es); recorded as exited (%s)\n", id, rec.Killed, state.ReasonSupervisorLost)
				}
			}
			return nil
		},
	}
}
