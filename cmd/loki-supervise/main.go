// Command loki-supervise is the host-side, durable supervisor. This file only
// assembles the CLI; each subcommand is declared in its own file of this
// directory (registered with register) and its behaviour lives in internal/.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/lineage"
)

var commands []*cli.Command

// register adds a subcommand; called from init functions beside this file.
func register(c *cli.Command) { commands = append(commands, c) }

func main() {
	// When this process is lineage's exec gate it never returns: it must
	// run before anything else (flags, signal handlers, goroutines).
	lineage.MaybeRunGate()
	// The reference supervisor's argv (no subcommand) runs a build.
	maybeRunReference()
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	app := &cli.App{
		Name:  "loki-supervise",
		Usage: "run AI coding-agent sessions and builds so that nothing they start outlives them",
		Description: "loki-supervise is the durable, host-side half of loki. It runs an agent as the\n" +
			"peer of loki-init (a trusted PID 1) in a private namespace, relays its stdio\n" +
			"byte-exactly, keeps a crash-safe record of every execution, and signals only\n" +
			"processes whose identity it has verified.",
		Commands:        commands,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // exit codes are decided below
	}
	err := app.Run(os.Args)
	if !exitcode.Classified(err) {
		err = exitcode.Usage(err) // the CLI parser's: a bad flag, an unknown command
	}
	if r := exitcode.Report(err); r != nil && r.Error() != "" {
		fmt.Fprintln(os.Stderr, "loki-supervise:", r)
	}
	os.Exit(exitcode.Code(err))
}
