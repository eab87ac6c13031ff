package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/clidoc"
	"github.com/loki-sh/loki/cmd/internal/version"
)

// flagChoices are the values of the flags that take one of a fixed set,
// for the completions (a test checks each is named in the flag's usage).
var flagChoices = clidoc.Choices{
	"isolation": {"namespace", "oci", "docker", "none"},
	"network":   {"host", "loopback", "none"},
	"fs":        {"confined", "host"},
	"userns":    {"private", "host"},
	"runtime":   {"crun", "runc"},
}

// completionWriters are the shells completion knows.
var completionWriters = map[string]func(io.Writer, string, []*cli.Command, clidoc.Choices) error{
	"bash": clidoc.Bash, "zsh": clidoc.Zsh, "fish": clidoc.Fish,
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		UsageText: "loki-supervise completion bash|zsh|fish",
		Description: `Generated from the command definitions: every command, subcommand and flag
completes, and so do the values of --isolation, --network, --fs, --userns, --runtime.

  loki-supervise completion bash > /etc/bash_completion.d/loki-supervise
  loki-supervise completion zsh  > "${fpath[1]}/_loki-supervise"
  loki-supervise completion fish > ~/.config/fish/completions/loki-supervise.fish

The release tarball holds all three, already generated.`,
		Action: func(c *cli.Context) error {
			gen, ok := completionWriters[c.Args().First()]
			if !ok || c.NArg() != 1 {
				return usage("completion: name one shell: bash, zsh or fish")
			}
			return gen(c.App.Writer, "loki-supervise", c.App.Commands, flagChoices)
		},
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print the manual page loki-supervise(1), or loki-init(8) with --init",
		UsageText: "loki-supervise man [--init PATH_TO_LOKI_INIT]",
		Description: `Generated from the command definitions (loki-init's from its own -h text):

  loki-supervise man > /usr/local/share/man/man1/loki-supervise.1
  loki-supervise man --init "$(command -v loki-init)" > /usr/local/share/man/man8/loki-init.8

The release tarball holds both, already generated.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "init", Usage: "write loki-init(8) from this loki-init binary's -h"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usage("man: no arguments (see 'loki-supervise man --help')")
			}
			v := version.Read("loki-supervise")
			if p := c.String("init"); p != "" {
				return initPage(c, p, "loki "+v.Version)
			}
			var gs []clidoc.Group
			for _, g := range groups() {
				gs = append(gs, clidoc.Group{Name: g.name, Commands: g.commands})
			}
			return clidoc.Man(c.App.Writer, clidoc.Page{
				Name: "loki-supervise", Section: 1, Version: "loki " + v.Version,
				Summary:     newApp().Usage,
				Synopsis:    []string{"loki-supervise COMMAND [flags] [-- CMD [ARGS...]]", "loki-supervise --version [--json]"},
				Description: appDescription,
				Sections: []clidoc.Section{
					{Title: "Exit status", Text: "The session's own: the peer's code; 124 when the lease expired; 125 refused or failed; 127 when the backend or runner could not be started; 2 for a usage error. Each command's section says more."},
					{Title: "See also", Text: "loki-init(8). The documentation in the repository's docs/ folder: session.md, confinement.md, executions.md, dashboard.md."},
				},
			}, gs)
		},
	}
}

// initPage writes loki-init(8) from the binary's own help, so the page
// is the text the binary prints.
func initPage(c *cli.Context, bin, ver string) error {
	out, _ := exec.Command(bin, "-h").CombinedOutput() // -h exits 0; the text is what matters
	text := string(out)
	if !strings.HasPrefix(text, "usage: loki-init") {
		return notLaunched(fmt.Errorf("man --init %s: not loki-init (its -h printed %d bytes)", bin, len(out)))
	}
	syn, rest, _ := strings.Cut(text, "\n\n")
	desc, flags, _ := strings.Cut(rest, "\nFlags:\n")
	var synopsis []string
	for _, l := range strings.Split(syn, "\n") {
		synopsis = append(synopsis, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "usage:")))
	}
	return clidoc.Man(c.App.Writer, clidoc.Page{
		Name: "loki-init", Section: 8, Version: ver,
		Summary:     "the trusted PID 1 of an agent's private PID namespace or container",
		Synopsis:    synopsis,
		Description: desc,
		Sections:    []clidoc.Section{{Title: "Options", Text: flags}, {Title: "See also", Text: "loki-supervise(1)"}},
	}, nil)
}
