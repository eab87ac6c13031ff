package main

import "github.com/urfave/cli/v2"

// withCachedNames returns flags with each one's names computed once.
// urfave computes a flag's names anew (a regexp per name) every time it
// looks one up, and before a command's action it looks up every flag of
// the command, each by a scan of them all: for the session's flags that
// cost more than a process start. The wrappers embed the flag itself, so
// every other method (help, docs, parsing) is the flag's own.
func withCachedNames(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		names := f.Names()
		switch f := f.(type) {
		case *cli.StringFlag:
			out[i] = stringFlag{f, names}
		case *cli.BoolFlag:
			if f.Hidden {
				out[i] = f // urfave's shell completion skips these by type
				continue
			}
			out[i] = boolFlag{f, names}
		case *cli.DurationFlag:
			out[i] = durationFlag{f, names}
		case *cli.GenericFlag:
			out[i] = genericFlag{f, names}
		default:
			out[i] = f
		}
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
