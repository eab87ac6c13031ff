// Command loki-kube runs the two loki-supervise commands that speak
// Kubernetes: pod-spec (the Pod of docs/cluster.md, in k8s.io/api types)
// and attach (the Pod's owner over the node's CRI, gRPC). They live in
// their own binary so that loki-supervise, which every session starts,
// links none of those modules and pays none of their package inits.
// loki-supervise execs this binary, found next to its own executable,
// for `loki-supervise pod-spec` and `loki-supervise attach`, with argv[0]
// loki-supervise so that its messages and help read as before.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/sessionflags"
	"github.com/loki-sh/loki/cmd/internal/suggest"
	"github.com/loki-sh/loki/cmd/internal/version"
	"github.com/loki-sh/loki/internal/exitcode"
)

type repeated = sessionflags.Repeated

func usage(format string, a ...any) error { return exitcode.Usage(fmt.Errorf(format, a...)) }

func notLaunched(err error) error { return exitcode.NotLaunched(err) }

func newApp(name string) *cli.App {
	cmds := []*cli.Command{podSpecCommand(), attachCommand()}
	for _, c := range cmds {
		p, flags := c.Name, c.Flags
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return exitcode.Usage(fmt.Errorf("%s: %s (see '%s %s --help')", p, suggest.FlagError(flags, err), name, p))
		}
	}
	return &cli.App{
		Name:            name,
		Usage:           "loki-supervise's Kubernetes commands: pod-spec and attach (docs/cluster.md)",
		Commands:        cmds,
		HideHelpCommand: true,
		HideVersion:     true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Usage: "print which build this is and exit"},
			&cli.BoolFlag{Name: "json", Usage: "with --version: print it as one JSON object"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				v := version.Read("loki-kube")
				if c.Bool("json") {
					fmt.Fprintln(c.App.Writer, v.JSON())
				} else {
					fmt.Fprintln(c.App.Writer, v)
				}
				return nil
			}
			if c.Args().Present() {
				return usage("unknown command %q: want pod-spec or attach", c.Args().First())
			}
			_ = cli.ShowAppHelp(c)
			return usage("")
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return exitcode.Usage(fmt.Errorf("%v (see '%s --help')", err, name))
		},
		ExitErrHandler: func(*cli.Context, error) {}, // exit codes are decided in main
	}
}

func main() {
	name := filepath.Base(os.Args[0])
	err := newApp(name).Run(os.Args)
	if !exitcode.Classified(err) {
		err = exitcode.Usage(err)
	}
	if r := exitcode.Report(err); r != nil && r.Error() != "" {
		fmt.Fprintln(os.Stderr, name+":", r)
	}
	os.Exit(exitcode.Code(err))
}
