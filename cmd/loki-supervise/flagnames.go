package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// withCachedNames returns flags with each one's names computed once.
// urfave computes a flag's names anew (a regexp per name) every time it
// looks one up, and before a command's action it looks up every flag of
// the command, each by a scan of them all: for the session's flags that
// cost more than a process start. The wrappers embed the flag itself, so
// every other method (help, docs, parsing) is the flag's own.
func withCachedNames(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			out[i] = stringFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.BoolFlag:
			out[i] = boolFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.DurationFlag:
			out[i] = durationFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.GenericFlag:
			out[i] = genericFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.IntFlag:
			out[i] = intFlag{f, flagNames(f.Name, f.Aliases)}
		default:
			out[i] = f
		}
	}
	return out
}

// flagNames is cli.FlagNames without its regexp: each name cut at its
// first comma or space.
func flagNames(name string, aliases []string) []string {
	out := make([]string, 0, 1+len(aliases))
	for _, n := range append([]string{name}, aliases...) {
		if i := strings.IndexAny(n, ", "); i >= 0 {
			n = n[:i]
		}
		out = append(out, n)
	}
	return out
}

type stringFlag struct {
	*cli.StringFlag
	names []string
}

func (f stringFlag) Names() []string { return f.names }

type boolFlag struct {
	*cli.BoolFlag
	names []string
}

func (f boolFlag) Names() []string { return f.names }

type durationFlag struct {
	*cli.DurationFlag
	names []string
}

func (f durationFlag) Names() []string { return f.names }

type genericFlag struct {
	*cli.GenericFlag
	names []string
}

func (f genericFlag) Names() []string { return f.names }

type intFlag struct {
	*cli.IntFlag
	names []string
}

func (f intFlag) Names() []string { return f.names }
