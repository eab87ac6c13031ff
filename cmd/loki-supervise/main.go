// Command loki-supervise is the host-side, durable supervisor. This file
// assembles the CLI from the commands declared beside it (one file each;
// their behaviour lives in internal/); entrypoints.go lists the roles the
// binary takes when it re-executes itself.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
)

// commands is the CLI, in the order --help lists it.
func commands() []*cli.Command {
	return []*cli.Command{
		authStatusCommand(),
		buildCommand(),
		deadlineCommand(),
		digestCommand(),
		doctorCommand(),
		identityCommand(),
		leaseCommand(),
		listCommand(),
		logsCommand(),
		ociSpecCommand(),
		probeCommand(),
		procCommand(),
		runCommand(),
		sessionCommand(),
		statusCommand(),
		stopCommand(),
		updateStateCommand(),
		verifyProofCommand(),
	}
}

func main() {
	runInternal() // before anything else: flags, signal handlers, goroutines
	// The reference supervisor's argv (no subcommand) runs a build.
	maybeRunReference()
	// What a killed supervisor's backend left outside its session dir is
	// released by the next session's sweep.
	session.OnStale(oci.CleanStale)
	session.OnStale(cgroup.CleanStale)
	app := &cli.App{
		Name:  "loki-supervise",
		Usage: "run AI coding-agent sessions and builds so that nothing they start outlives them",
		Description: "loki-supervise is the durable, host-side half of loki. It runs an agent as the\n" +
			"peer of loki-init (a trusted PID 1) in a private namespace, relays its stdio\n" +
			"byte-exactly, keeps a crash-safe record of every execution, and signals only\n" +
			"processes whose identity it has verified.\n\n" +
			"Called as loki-build-supervisor, or with the reference supervisor's options and no\n" +
			"command (--execution-id ID --run-sh ...), it takes build_supervisor.py's command line\n" +
			"as a dashboard runs it; identity, auth-status, update-state and proc answer what the\n" +
			"dashboard imported from that module (docs/dashboard.md).",
		Commands:        commands(),
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
