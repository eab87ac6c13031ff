package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/provider"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/exitcode"
)

var (
	workspaceRootFlag = &cli.StringFlag{Name: "workspace-root", Required: true,
		Usage: "an entry of LOKI_WORKSPACE_ROOTS; the probe works in a temporary directory inside it"}
	runShFlag = &cli.StringFlag{Name: "run-sh", Required: true,
		Usage: "the engine's run.sh; the directory two levels up is the read-only engine source"}
)

func probeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "prove, before a confined build is offered, that its confinement works here",
		Description: "Both probes read the host boundary from LOKI_HOST_PROTECTED_ROOT, LOKI_WORKSPACE_ROOTS,\n" +
			"LOKI_HOST_RUNTIME_READ_PATHS, LOKI_HOST_RUNTIME_WRITE_PATHS, LOKI_HOST_CHILD_PATH and\n" +
			"LOKI_HOST_RESERVED_PORTS (see docs/macos.md) and print one JSON object on stdout;\n" +
			"a probe that cannot run (not macOS, an invalid boundary) prints {\"ok\": false,\n" +
			"\"reason\": ...} and one line on stderr.",
		Subcommands: []*cli.Command{
			{
				Name:  "seatbelt",
				Usage: "run the kernel smoke probe of the macOS Seatbelt profile (macOS only)",
				Description: "Confines a small payload with the build's profile and requires that it can write its\n" +
					"workspace, read /etc/hosts and kill its own process group, and that it is refused a\n" +
					"sibling directory, a unix-socket connect and a reserved-port bind. On success prints the\n" +
					"boundary identity and probe_sha256; export that digest as LOKI_HOST_SEATBELT_PROBE_SHA256\n" +
					"to arm LOKI_HOST_SEATBELT=1. Exit 0 on success, 2 for an invalid boundary, 125 otherwise.",
				Flags:  []cli.Flag{workspaceRootFlag, runShFlag},
				Action: probeSeatbelt,
			},
			{
				Name:  "provider-auth",
				Usage: "check that a provider CLI is logged in and answers from inside the Seatbelt boundary",
				Description: "Runs the provider's auth-status command and one tiny live request under the build's\n" +
					"profile and environment, and classifies the outcome (the provider's output is never\n" +
					"shown). Prints {provider, available, classification, action[, live_inference_passed]}.\n" +
					"Exit 0 when available, 1 when not, 2 for an invalid boundary.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "provider", Required: true, Usage: "claude, codex, cline, ..."},
					workspaceRootFlag, runShFlag,
				},
				Action: probeProvider,
			},
		},
	}
}

func probeSeatbelt(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return exitcode.Refused(fmt.Errorf("cannot find this program to use as the probe payload: %w", err))
	}
	payload := seatbelt.Payload{Binary: self, Args: []string{"probe", payloadCommand}}
	res, err := seatbelt.Probe(ctx, c.String("workspace-root"), c.String("run-sh"), payload)
	if errors.Is(err, seatbelt.ErrNotMacOS) {
		err = fmt.Errorf("%w; on Linux, confine agent sessions with a private namespace instead: "+
			"loki-supervise session --isolation namespace", err)
	}
	if err != nil {
		return probeFailed(c, err)
	}
	return printJSON(c, res.Map())
}

func probeProvider(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := provider.Default().Smoke(ctx, c.String("workspace-root"), c.String("run-sh"), c.String("provider"))
	if err != nil {
		return probeFailed(c, err)
	}
	if err := printJSON(c, res.Map()); err != nil {
		return err
	}
	if !res.Available {
		return exitcode.Failed(nil)
	}
	return nil
}

// probeFailed is a probe that could not run: stdout still gets its one
// object, for the program that reads it, and the exit code is probeError's.
func probeFailed(c *cli.Context, err error) error {
	_ = printJSON(c, map[string]any{"ok": false, "reason": err.Error()})
	return probeError(err)
}

// probeError maps a boundary or probe failure: a wrong boundary is the
// user's to fix (2), anything else is a refusal (125).
func probeError(err error) error {
	if errors.Is(err, boundary.ErrInvalid) {
		return exitcode.Usage(err)
	}
	return exitcode.Refused(err)
}

func printJSON(c *cli.Context, v any) error {
	out, err := canonjson.MarshalIndent(v)
	if err != nil {
		return exitcode.Refused(err)
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s\n", out)
	return err
}
