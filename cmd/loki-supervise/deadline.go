package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/deadline"
)

func deadlineCommand() *cli.Command {
	return &cli.Command{
		Name:      "deadline",
		Usage:     "run a command under hard/idle deadlines; nothing it starts survives it",
		UsageText: "loki-supervise deadline --hard SECONDS --grace SECONDS [--idle SECONDS] -- CMD [ARG...]\n   loki-supervise deadline cancel CONTROL_FILE",
		Description: "Runs CMD as a tracked session leader and relays its stdout and stderr. When the\n" +
			"hard deadline (wall time) or the idle deadline (time since the last output byte)\n" +
			"passes, it prints one JSON line on stderr,\n" +
			"  {\"type\":\"loki_provider_deadline\",\"reason\":\"hard_timeout\"|\"idle_timeout\",...}\n" +
			"stops CMD and every descendant (SIGTERM, then SIGKILL after the grace) and exits 124.\n\n" +
			"Exit codes: CMD's own; 124 deadline; 125 CMD left descendants behind (they are\n" +
			"stopped) or an internal failure; 126/127 CMD not executable/not found; 141 output\n" +
			"could not be written; 128+N CMD died of signal N, or this process got\n" +
			"SIGTERM/SIGINT/SIGHUP N (the lineage is stopped first).\n\n" +
			"With " + deadline.ControlEnv + "=PATH set, a control file naming this process is\n" +
			"written (0600, exclusive) for `deadline cancel PATH`.\n\n" +
			"deadline cancel CONTROL_FILE (no flags) sends SIGTERM to that deadline process, and\n" +
			"refuses (exit 1, nothing signalled) unless CONTROL_FILE is a regular 0600 file owned\n" +
			"by you with one link, at most 1 KiB, holding exactly schema, pid and identity, and\n" +
			"the identity still names that live process.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "hard", Usage: "stop after `SECONDS` of wall time (required, > 0)"},
			&cli.StringFlag{Name: "grace", Usage: "`SECONDS` between SIGTERM and SIGKILL when stopping (required)"},
			&cli.StringFlag{Name: "idle", Value: "0", Usage: "stop after `SECONDS` without output (0 = off; < --hard)"},
		},
		Action: deadlineRun,
	}
}

func deadlineRun(c *cli.Context) error {
	// "cancel" is a verb only without deadline flags: after them it is the
	// command to run (urfave subcommands would also capture "-- cancel").
	if c.Args().First() == "cancel" && !c.IsSet("hard") && !c.IsSet("grace") && !c.IsSet("idle") {
		return deadlineCancel(c)
	}
	if !c.IsSet("hard") || !c.IsSet("grace") {
		return exitcode.Usage(errors.New("deadline: --hard and --grace are required (see --help)"))
	}
	var cfg deadline.Config
	var err error
	for _, f := range []struct {
		name string
		dst  *deadline.Seconds
	}{{"hard", &cfg.Hard}, {"grace", &cfg.Grace}, {"idle", &cfg.Idle}} {
		if *f.dst, err = deadline.ParseSeconds(f.name, c.String(f.name)); err != nil {
			return exitcode.Usage(err)
		}
	}
	cfg.ControlFile = os.Getenv(deadline.ControlEnv)
	cmd := deadline.Command{Args: c.Args().Slice(), Env: os.Environ()}
	return deadline.Run(cfg, cmd, deadline.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}

func deadlineCancel(c *cli.Context) error {
	if c.NArg() != 2 {
		return exitcode.Usage(errors.New("deadline cancel: want exactly one CONTROL_FILE"))
	}
	pid, err := deadline.Cancel(c.Args().Get(1))
	if err != nil {
		return exitcode.Failed(fmt.Errorf("deadline cancel: %w", err))
	}
	fmt.Fprintf(c.App.Writer, "sent SIGTERM to deadline process %d\n", pid)
	return nil
}
