// Command loki-supervise is the host-side, durable supervisor. This file
// assembles the CLI from the commands declared beside it (one file each;
// their behaviour lives in internal/); cli.go shapes how the CLI answers
// (help, typos, usage errors, --version); entrypoints.go lists the roles
// the binary takes when it re-executes itself.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	_ "github.com/loki-sh/loki/internal/proc/sysmon/calm" // early: a session's start
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
)

// sessionsGroup is the heading of session, the command appFor builds alone.
const sessionsGroup = "Sessions"

// groups is the CLI, in the order --help lists it: the main job first.
func groups() []group {
	podSpec, attach := kubeCommands()
	return []group{
		{sessionsGroup, []*cli.Command{
			sessionCommand(),
			leaseCommand(),
			ociSpecCommand(),
			podSpec,
			installInitCommand(),
			attach,
		}},
		{"Durable executions", []*cli.Command{
			runCommand(),
			stopCommand(),
			deadlineCommand(),
		}},
		{"Inspection", []*cli.Command{
			statusCommand(),
			listCommand(),
			logsCommand(),
			digestCommand(),
			verifyProofCommand(),
		}},
		{"Diagnostics", []*cli.Command{
			doctorCommand(),
			versionCommand(),
		}},
		{"Installation", []*cli.Command{
			completionCommand(),
			manCommand(),
		}},
		{"Dashboard compatibility (docs/dashboard.md)", []*cli.Command{
			buildCommand(),
			identityCommand(),
			authStatusCommand(),
			updateStateCommand(),
			procCommand(),
			probeCommand(),
		}},
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
	err := appFor(os.Args).Run(os.Args)
	if !exitcode.Classified(err) {
		err = exitcode.Usage(err) // the CLI parser's: a bad flag, an unknown command
	}
	if r := exitcode.Report(err); r != nil && r.Error() != "" {
		fmt.Fprintln(os.Stderr, "loki-supervise:", r)
	}
	os.Exit(exitcode.Code(err))
}
