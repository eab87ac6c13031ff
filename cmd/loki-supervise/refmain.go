package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loki-sh/loki/internal/execution"
	"github.com/loki-sh/loki/internal/exitcode"
)

// refHelp is the drop-in's --help, laid out like argparse's.
const refHelp = `usage: %[1]s [-h] --execution-id EXECUTION_ID --run-sh RUN_SH
       %[2]*[3]s --workspace WORKSPACE --loki-dir LOKI_DIR --spec SPEC
       %[2]*[3]s --provider PROVIDER [--parallel]

Durable supervisor for dashboard-started workspace builds (loki-supervise
build, called with the reference supervisor's command line).

options:
  -h, --help            show this help message and exit
  --execution-id EXECUTION_ID
  --run-sh RUN_SH
  --workspace WORKSPACE
  --loki-dir LOKI_DIR
  --spec SPEC
  --provider PROVIDER
  --parallel

Options may be abbreviated to any unambiguous prefix (--exec, --prov) and
given as --option=value. Exit status: the runner's code, 128+N for signal N,
127 when it could not be launched, 2 for a bad command line, 1 when the
execution id or a path is invalid or the record cannot be written.
See docs/dashboard.md.
`

// runReference runs a build from the reference supervisor's argv and
// returns its outcome, having printed any message itself (in argparse's
// form). The statuses follow the reference: usage (2) for anything
// argparse refuses; failed (1) where the reference dies of an uncaught
// exception before or instead of recording a result (an invalid id or
// path, an unwritable record); otherwise the runner's own outcome.
func runReference(argv []string, stdout, stderr io.Writer) error {
	prog := filepath.Base(argv[0])
	a, err := parseRefArgs(argv[1:])
	if err == errRefHelp {
		fmt.Fprintf(stdout, refHelp, prog, len(prog)+7, "")
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
		return exitcode.Usage(nil)
	}
	spec, err := execution.PrepareBuild(execution.BuildOptions{
		ExecutionID: a.values["execution-id"],
		RunSh:       a.values["run-sh"],
		Workspace:   a.values["workspace"],
		LokiDir:     a.values["loki-dir"],
		Spec:        a.values["spec"],
		Provider:    a.values["provider"],
		Parallel:    a.parallel,
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
		return exitcode.Failed(nil)
	}
	res, err := execution.Run(context.Background(), spec, execution.TimingFromEnv(), execution.Default())
	if err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
		return exitcode.Failed(nil)
	}
	return res.Outcome()
}

// maybeRunReference exits with runReference's status when os.Args is the
// reference's command line; otherwise it returns.
func maybeRunReference() {
	if isReferenceArgv(os.Args) {
		os.Exit(exitcode.Code(runReference(os.Args, os.Stdout, os.Stderr)))
	}
}
