package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/exitcode"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "ask a running execution to stop (durable: survives a restart of the caller)",
		UsageText: "loki-supervise stop UUID",
		Description: "Records stop_requested_at in the execution's state.json. Its supervisor then sends\n" +
			"SIGTERM to the runner's verified process group and SIGKILL after\n" +
			"LOKI_BUILD_STOP_GRACE_SECONDS (default 10). Exit 1 if the execution does not exist\n" +
			"or has already exited.",
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
				fmt.Fprintf(c.App.ErrWriter, "loki-supervise: warning: the supervisor of %s is not running; nothing will act on the request\n", id)
			}
			return nil
		},
	}
}
