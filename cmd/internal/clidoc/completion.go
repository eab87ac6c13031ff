package clidoc

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// node is one command path of the CLI ("" is the program itself).
type node struct {
	path    string
	usage   string
	subs    []string
	flags   []cli.Flag
	visible []string // every flag spelling, with dashes
}

func tree(cmds []*cli.Command) []node {
	root := node{}
	var out []node
	var walk func(parent string, cs []*cli.Command) []string
	walk = func(parent string, cs []*cli.Command) []string {
		var names []string
		for _, c := range cs {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(parent + " " + c.Name)
			names = append(names, c.Name)
			n := node{path: p, usage: c.Usage, flags: visibleFlags(c.Flags), visible: flagNames(c)}
			n.subs = walk(p, c.Subcommands)
			out = append(out, n)
		}
		return names
	}
	root.subs = walk("", cmds)
	root.visible = []string{"--help", "--json", "--version"}
	return append([]node{root}, out...)
}

// Choices names the values a flag takes, by the flag's long name.
type Choices map[string][]string

// Bash writes a bash completion script for prog.
func Bash(w io.Writer, prog string, cmds []*cli.Command, choices Choices) error {
	_, err := io.WriteString(w, bashFunction(prog, cmds, choices)+fmt.Sprintf("complete -o default -F %s %s\n", funcName(prog), prog))
	return err
}

// Zsh writes a zsh completion script: zsh's bash compatibility layer
// running the same function, so the two shells never disagree.
func Zsh(w io.Writer, prog string, cmds []*cli.Command, choices Choices) error {
	_, err := fmt.Fprintf(w, "#compdef %s\n# zsh completion for %s, through zsh's bashcompinit.\nautoload -U +X bashcompinit && bashcompinit\n%scomplete -o default -F %s %s\n",
		prog, prog, bashFunction(prog, cmds, choices), funcName(prog), prog)
	return err
}

func funcName(prog string) string { return "_" + strings.ReplaceAll(prog, "-", "_") }

func bashFunction(prog string, cmds []*cli.Command, choices Choices) string {
	nodes := tree(cmds)
	var paths []string
	for _, n := range nodes[1:] {
		paths = append(paths, shq(n.path))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s, generated from its command definitions\n# ('%s completion bash'); do not edit.\n", prog, prog)
	fmt.Fprintf(&b, "%s() {\n", funcName(prog))
	b.WriteString(`	local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" cand i w
	[ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"
	for ((i = 1; i < COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		if [ "$w" = "--" ]; then
			# the agent's own command line
			[ $((i + 1)) -eq "$COMP_CWORD" ] && COMPREPLY=($(compgen -c -- "$cur"))
			return 0
		fi
		cand="${path:+$path }$w"
		case "$cand" in
		` + strings.Join(paths, "|") + `) path="$cand" ;;
		esac
	done
	case "$path:$prev" in
`)
	for _, n := range nodes {
		for _, f := range n.flags {
			if !takesValue(f) {
				continue
			}
			var pats []string
			for _, name := range f.Names() {
				pats = append(pats, shq(n.path+":"+dashes(name)))
			}
			if vals, ok := choices[f.Names()[0]]; ok {
				fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -W %s -- \"$cur\")); return 0 ;;\n", strings.Join(pats, "|"), shq(strings.Join(vals, " ")))
			} else {
				fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n", strings.Join(pats, "|"))
			}
		}
	}
	b.WriteString("\tesac\n\tlocal words=\"\"\n\tif [[ \"$cur\" == -* ]]; then\n\t\tcase \"$path\" in\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "\t\t%s) words=%s ;;\n", shq(n.path), shq(strings.Join(n.visible, " ")))
	}
	b.WriteString("\t\tesac\n\telse\n\t\tcase \"$path\" in\n")
	for _, n := range nodes {
		if len(n.subs) > 0 {
			fmt.Fprintf(&b, "\t\t%s) words=%s ;;\n", shq(n.path), shq(strings.Join(n.subs, " ")))
		}
	}
	b.WriteString("\t\tesac\n\tfi\n\t[ -n \"$words\" ] && COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\treturn 0\n}\n")
	return b.String()
}

// Fish writes a fish completion script for prog.
func Fish(w io.Writer, prog string, cmds []*cli.Command, choices Choices) error {
	nodes := tree(cmds)
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s, generated from its command definitions\n# ('%s completion fish'); do not edit.\n", prog, prog)
	// A node's condition: its own words were seen, and none of its
	// subcommands yet.
	cond := func(n node) string {
		var c []string
		if n.path == "" {
			c = append(c, "__fish_use_subcommand")
		} else {
			for _, w := range strings.Fields(n.path) {
				c = append(c, "__fish_seen_subcommand_from "+w)
			}
		}
		return strings.Join(c, "; and ")
	}
	for _, n := range nodes {
		for _, s := range n.subs {
			for _, m := range nodes {
				if m.path == strings.TrimSpace(n.path+" "+s) {
					c := cond(n)
					if len(n.subs) > 0 && n.path != "" {
						c += "; and not __fish_seen_subcommand_from " + strings.Join(n.subs, " ")
					}
					fmt.Fprintf(&b, "complete -c %s -f -n %s -a %s -d %s\n", prog, shq(c), shq(s), shq(m.usage))
				}
			}
		}
		if n.path == "" {
			continue
		}
		for _, f := range n.flags {
			line := fmt.Sprintf("complete -c %s -n %s", prog, shq(cond(n)))
			for _, name := range f.Names() {
				if len(name) == 1 {
					line += " -s " + name
				} else {
					line += " -l " + name
				}
			}
			if takesValue(f) {
				line += " -r"
				if vals, ok := choices[f.Names()[0]]; ok {
					line += " -f -a " + shq(strings.Join(vals, " "))
				}
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, shq(firstLine(flagUsage(f))))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// shq quotes s for sh and fish alike.
func shq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Paths lists every command path, for tests.
func Paths(cmds []*cli.Command) []string {
	var out []string
	for _, n := range tree(cmds)[1:] {
		out = append(out, n.path)
	}
	sort.Strings(out)
	return out
}
