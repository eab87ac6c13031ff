package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/suggest"
	"github.com/loki-sh/loki/cmd/internal/version"
	"github.com/loki-sh/loki/internal/exitcode"
)

// group is one heading of --help.
type group struct {
	name     string
	commands []*cli.Command
}

const appDescription = `loki-supervise is the durable, host-side half of loki. It runs an agent as the
peer of loki-init (a trusted PID 1) in a private namespace, relays its stdio
byte-exactly, keeps a crash-safe record of every execution, and signals only
processes whose identity it has verified.

Called as loki-build-supervisor, or with the reference supervisor's options and no
command (--execution-id ID --run-sh ...), it takes build_supervisor.py's command line
as a dashboard runs it; identity, auth-status, update-state and proc answer what the
dashboard imported from that module (docs/dashboard.md).`

// newApp is the CLI. Every answer it gives on bad input is one line on
// stderr and exit 2: an unknown command names the nearest one, a bad flag
// names the command's --help, and no help text is dumped around it.
func newApp() *cli.App { return appOf(groups()) }

// appFor is the CLI main runs for args (os.Args). When they name session,
// the main job, it holds that command alone: building every command and
// its flags to run one cost each session ~0.1 ms and ~70 KB of fresh
// heap. It answers as the whole CLI does: with a command named first, the
// CLI's own flags, help and other commands are never reached
// (TestSessionAloneAnswersAsTheWholeCLI).
func appFor(args []string) *cli.App {
	if len(args) > 1 && args[1] == "session" {
		return appOf([]group{{sessionsGroup, []*cli.Command{sessionCommand()}}})
	}
	return newApp()
}

func appOf(gs []group) *cli.App {
	var cmds []*cli.Command
	for _, g := range gs {
		for _, c := range g.commands {
			c.Category = g.name
			cmds = append(cmds, c)
		}
	}
	walk(cmds, "", func(c *cli.Command, path string) {
		p := strings.TrimPrefix(path, " ")
		if len(c.Subcommands) > 0 && c.Action == nil {
			subs := c.Subcommands
			c.Action = func(ctx *cli.Context) error {
				if name := ctx.Args().First(); name != "" {
					return unknownCommand(p, subs, name)
				}
				_ = cli.ShowSubcommandHelp(ctx)
				return usage("")
			}
		}
		c.Flags = withCachedNames(c.Flags)
		flags := c.Flags
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return exitcode.Usage(fmt.Errorf("%s: %s (see 'loki-supervise %s --help')", p, suggest.FlagError(flags, err), p))
		}
	})
	return &cli.App{
		Name:                  "loki-supervise",
		Usage:                 "run AI coding-agent sessions and builds so that nothing they start outlives them",
		Description:           appDescription,
		Commands:              cmds,
		HideHelpCommand:       true,
		HideVersion:           true,
		CustomAppHelpTemplate: appHelp(gs),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Usage: "print which build this is (version, commit, Go, platform) and exit"},
			&cli.BoolFlag{Name: "json", Usage: "with --version: print it as one JSON object"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return exitcode.Usage(fmt.Errorf("%v (see 'loki-supervise --help')", err))
		},
		Action:         rootAction(cmds),
		ExitErrHandler: func(*cli.Context, error) {}, // exit codes are decided in main
	}
}

// rootAction answers a command line that named no known command.
func rootAction(cmds []*cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Bool("version") {
			return printVersion(c, c.Bool("json"))
		}
		if c.Bool("json") {
			return usage("--json goes with --version (each command has its own --json)")
		}
		switch first := c.Args().First(); {
		case first == "":
			_ = cli.ShowAppHelp(c)
			return usage("") // no command: the help, and usage's exit code
		case first == "help":
			if name := c.Args().Get(1); name != "" {
				if cli.ShowCommandHelp(c, name) != nil {
					return unknownCommand("", cmds, name)
				}
				return nil
			}
			return cli.ShowAppHelp(c)
		default:
			return unknownCommand("", cmds, first)
		}
	}
}

func unknownCommand(parent string, cmds []*cli.Command, name string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	prefix, help := "", "loki-supervise --help"
	if parent != "" {
		prefix, help = parent+": ", "loki-supervise "+parent+" --help"
	}
	if s := suggest.Nearest(name, names); s != "" {
		return usage("%sunknown command %q: did you mean %q? (see '%s')", prefix, name, s, help)
	}
	return usage("%sunknown command %q (see '%s')", prefix, name, help)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print which build this is: version, commit, dirty tree, Go, platform",
		UsageText: "loki-supervise version [--json]   (also: loki-supervise --version [--json])",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print it as one JSON object"}},
		Action:    func(c *cli.Context) error { return printVersion(c, c.Bool("json")) },
	}
}

func printVersion(c *cli.Context, asJSON bool) error {
	v := version.Read("loki-supervise")
	if asJSON {
		fmt.Fprintln(c.App.Writer, v.JSON())
	} else {
		fmt.Fprintln(c.App.Writer, v)
	}
	return nil
}

// walk calls f on every command and subcommand, with its full name.
func walk(cmds []*cli.Command, parent string, f func(c *cli.Command, path string)) {
	for _, c := range cmds {
		p := parent + " " + c.Name
		f(c, p)
		walk(c.Subcommands, p, f)
	}
}

// appHelp is --help's text: the commands in the order of groups (urfave
// would sort the headings by name), the main job first.
func appHelp(gs []group) string {
	width := 0
	for _, g := range gs {
		for _, c := range g.commands {
			width = max(width, len(c.Name))
		}
	}
	var b strings.Builder
	b.WriteString(`NAME:
   {{.Name}} - {{.Usage}}

USAGE:
   loki-supervise COMMAND [flags] [-- CMD [ARGS...]]
   loki-supervise COMMAND --help     each command's flags, with examples
   loki-supervise --version [--json]

`)
	for _, g := range gs {
		fmt.Fprintf(&b, "%s:\n", strings.ToUpper(g.name[:1])+g.name[1:])
		for _, c := range g.commands {
			if !c.Hidden {
				fmt.Fprintf(&b, "   %-*s  %s\n", width, c.Name, c.Usage)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(`Start here:
   loki-supervise session -- claude-agent-acp          an ACP agent for your editor
   loki-supervise session -t -- claude                 a terminal agent
   loki-supervise session --allow-host api.anthropic.com -- claude-agent-acp
                                                       ... that reaches only its API
   loki-supervise doctor                               what this host can confine

DESCRIPTION:
   {{wrap .Description 3}}

GLOBAL OPTIONS:
   --version   print which build this is (version, commit, Go, platform) and exit
   --json      with --version: print it as one JSON object
   --help, -h  show this help
`)
	// Command usages are literal text in the template: none may hold "{{".
	return b.String()
}
