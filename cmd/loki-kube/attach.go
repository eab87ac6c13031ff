package main

import (
	"context"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/kubecli"
	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes/attach"
	"github.com/loki-sh/loki/internal/session/peerenv"
)

func attachCommand() *cli.Command {
	cmd := kubecli.Attach()
	cmd.Action = func(c *cli.Context) error {
		if err := sessionflags.PositiveDurations(c, "start-timeout"); err != nil {
			return err
		}
		env, err := peerenv.Parse(*c.Generic("env").(*repeated), c.Bool("no-default-env"))
		if err != nil {
			return usage("attach: %v", err)
		}
		rt, err := attach.DialRuntime(c.String("runtime-endpoint"))
		if err != nil {
			return notLaunched(err)
		}
		defer rt.Close()
		return attach.Run(context.Background(), attach.Config{
			Runtime: rt, Pod: c.String("pod"), Namespace: c.String("namespace"),
			Peer:         launch.Spec{Argv: c.Args().Slice(), Cwd: c.String("cwd"), Env: env.Build(os.Environ())},
			StartTimeout: c.Duration("start-timeout"),
			Stdin:        os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		})
	}
	return cmd
}
