package main

import (
	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/execution"
)

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print an execution's runner.log",
		UsageText: "loki-supervise logs UUID [--follow]",
		Description: "Prints the runner's combined stdout and stderr. With --follow keeps printing new\n" +
			"output until the execution has exited (or its supervisor is lost).",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "wait for new output until the execution exits"}},
		Action: func(c *cli.Context) error {
			store, id, trailing, err := oneID(c, "follow", "f")
			if err != nil {
				return err
			}
			if err := execution.CopyLog(c.Context, store, id, c.App.Writer, c.Bool("follow") || trailing["follow"] || trailing["f"], execution.DefaultPoll); err != nil {
				return readErr(id, err)
			}
			return nil
		},
	}
}
