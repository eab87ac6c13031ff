package clidoc

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Group is one heading of commands, in the order the page shows them.
type Group struct {
	Name     string
	Commands []*cli.Command
}

// Page is what a manual page says beyond the commands.
type Page struct {
	Name        string // the program
	Section     int
	Version     string // the footer's source, e.g. "loki devel"
	Summary     string // NAME's one line
	Synopsis    []string
	Description string
	Sections    []Section // extra sections after the commands (EXIT STATUS, SEE ALSO)
}

// Section is one extra section of a page, as plain text.
type Section struct {
	Title string
	Text  string
}

// Man writes the page in roff (man(7)).
func Man(w io.Writer, p Page, groups []Group) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s %d \"\" %q \"loki manual\"\n", strings.ToUpper(p.Name), p.Section, p.Version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", p.Name, roff(p.Summary))
	b.WriteString(".SH SYNOPSIS\n")
	for i, s := range p.Synopsis {
		if i > 0 {
			b.WriteString(".br\n")
		}
		fmt.Fprintf(&b, "%s\n", roff(s))
	}
	if p.Description != "" {
		b.WriteString(".SH DESCRIPTION\n")
		para(&b, p.Description)
	}
	if len(groups) > 0 {
		b.WriteString(".SH COMMANDS\n")
	}
	for _, g := range groups {
		fmt.Fprintf(&b, ".SS %s\n", roff(g.Name))
		for _, c := range g.Commands {
			command(&b, p.Name, c)
		}
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", roff(strings.ToUpper(s.Title)))
		para(&b, s.Text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func command(b *strings.Builder, parent string, c *cli.Command) {
	if c.Hidden {
		return
	}
	name := parent + " " + c.Name
	fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roff(name), roff(c.Usage))
	b.WriteString(".RS\n")
	if c.UsageText != "" {
		b.WriteString(".PP\nUsage:\n")
		pre(b, c.UsageText)
	}
	if c.Description != "" {
		pre(b, c.Description)
	}
	for _, f := range visibleFlags(c.Flags) {
		fmt.Fprintf(b, ".TP\n%s\n%s\n", flagSyntax(f), roff(flagUsage(f)))
	}
	b.WriteString(".RE\n")
	for _, s := range c.Subcommands {
		command(b, name, s)
	}
}

func para(b *strings.Builder, text string) {
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		fmt.Fprintf(b, "%s\n", roff(p))
	}
}

// pre keeps text's own line breaks and indentation (usage examples,
// aligned lists), as the --help text shows them.
func pre(b *strings.Builder, text string) {
	b.WriteString(".PP\n.nf\n")
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(b, "%s\n", roff(l))
	}
	b.WriteString(".fi\n")
}

// roff escapes text for a roff line: backslashes, and a leading dot or
// quote that roff would take for a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

func visibleFlags(fs []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range fs {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// flagSyntax is "\fB--name\fR, \fB-n\fR \fIVALUE\fR".
func flagSyntax(f cli.Flag) string {
	var parts []string
	for _, n := range f.Names() {
		parts = append(parts, `\fB`+roff(dashes(n))+`\fR`)
	}
	s := strings.Join(parts, ", ")
	if takesValue(f) {
		s += ` \fIVALUE\fR`
	}
	return s
}

func dashes(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

func flagUsage(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		u := d.GetUsage()
		if v := d.GetDefaultText(); v != "" && takesValue(f) {
			u += " (default: " + v + ")"
		} else if v := d.GetValue(); v != "" && takesValue(f) {
			u += " (default: " + v + ")"
		}
		return u
	}
	return ""
}

func takesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return false
}

// flagNames lists a command's visible flags, long names first.
func flagNames(c *cli.Command) []string {
	var out []string
	for _, f := range visibleFlags(c.Flags) {
		for _, n := range f.Names() {
			out = append(out, dashes(n))
		}
	}
	out = append(out, "--help")
	sort.Strings(out)
	return out
}
