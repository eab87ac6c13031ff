package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes/attach"
	"github.com/loki-sh/loki/internal/session/peerenv"
)

func attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "be the owner of a pod-spec Pod's session over the node's CRI (docs/cluster.md)",
		UsageText: "loki-supervise attach --runtime-endpoint unix:///run/containerd/containerd.sock --pod NAME [--namespace NS] [--env NAME[=VALUE]]... [-- CMD [ARGS...]]",
		Description: `The owner's side of the Pod that pod-spec prints, through the CRI the kubelet
drives (run it on the Pod's node): attaches to the lease-holder (which renews only
while this stream is open: this process's death ends the agent at the lease bound,
124), writes the launch prelude (CMD, or the Pod's loki.sh/launch annotation; the
environment from --env and the defaults, as session builds it) and then its own
stdin on the agent's attach stream, relays the agent's stdout and stderr byte for
byte, and exits with the agent container's exit code.

An attach that ends before the streaming server's final status, or while the agent
container still runs, may have lost output: exit 125 with one line. The containers
must be running within --start-timeout (127 otherwise).

Example:
  loki-supervise attach --runtime-endpoint unix:///run/containerd/containerd.sock \
      --pod s1 --namespace default --env ANTHROPIC_API_KEY`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "runtime-endpoint", Value: "unix:///run/containerd/containerd.sock", Usage: "the node's CRI socket"},
			&cli.StringFlag{Name: "pod", Value: "loki-session", Usage: "the Pod's name"},
			&cli.StringFlag{Name: "namespace", Value: "default", Usage: "the Pod's namespace"},
			&cli.GenericFlag{Name: "env", Value: &repeated{}, Usage: "pass NAME from this environment, or set NAME=VALUE (repeatable)"},
			&cli.BoolFlag{Name: "no-default-env", Usage: "do not pass the default variables (HOME, PATH, ...)"},
			&cli.StringFlag{Name: "cwd", Usage: "the agent's working directory (default: the Pod's annotation, else /)"},
			&cli.DurationFlag{Name: "start-timeout", Value: 2 * time.Minute, Usage: "how long to wait for the Pod's containers to run"},
		},
		Action: func(c *cli.Context) error {
			if err := positiveDurations(c, "start-timeout"); err != nil {
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
		},
	}
}
