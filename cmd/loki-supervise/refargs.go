package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/loki-sh/loki/internal/pycompat"
)

// This file parses the reference supervisor's command line
// (build_supervisor.py --execution-id ID --run-sh ... [--parallel]) the way
// Python 3's argparse parses it, so that a dashboard can run loki with the
// argv it already builds. Only what that parser accepts is accepted:
// unambiguous prefixes (--exec, --prov), --opt=value, the last repeat
// winning; and what it refuses is refused with argparse's message and exit
// status 2: ambiguous prefixes, a missing value, stray arguments, missing
// required options.

// refNames are argv[0] base names that always mean the reference's argv.
var refNames = []string{"loki-build-supervisor", "build_supervisor.py", "build_supervisor"}

// refOption is one option string of the reference parser, in the order
// argparse registers them (which is the order of "could match" lists).
type refOption struct {
	name string
	dest string // "" for help
	flag bool   // store_true: takes no value
}

var refOptions = []refOption{
	{name: "-h"},
	{name: "--help"},
	{name: "--execution-id", dest: "execution-id"},
	{name: "--run-sh", dest: "run-sh"},
	{name: "--workspace", dest: "workspace"},
	{name: "--loki-dir", dest: "loki-dir"},
	{name: "--spec", dest: "spec"},
	{name: "--provider", dest: "provider"},
	{name: "--parallel", dest: "parallel", flag: true},
}

// refRequired are the required options, in declaration order (the order of
// argparse's "the following arguments are required" list).
var refRequired = []string{"execution-id", "run-sh", "workspace", "loki-dir", "spec", "provider"}

// refArgs is a parsed reference command line.
type refArgs struct {
	values   map[string]string // dest -> value
	parallel bool
}

// errRefHelp means -h/--help was reached: print the help, exit 0.
var errRefHelp = errors.New("help requested")

// refUsageError is an argparse error: exit 2 with "PROG: error: MSG".
type refUsageError struct{ msg string }

func (e *refUsageError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &refUsageError{msg: fmt.Sprintf(format, a...)}
}

// isReferenceArgv reports whether argv is the reference's command line
// rather than loki-supervise's: the program is called by one of refNames
// (a symlink), or its first argument is a long option of the reference
// (or a prefix of one, as argparse allows) that loki-supervise itself does
// not have. loki-supervise's own first argument is a subcommand or --help.
func isReferenceArgv(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if slices.Contains(refNames, filepath.Base(argv[0])) {
		return true
	}
	if len(argv) < 2 || !strings.HasPrefix(argv[1], "--") {
		return false
	}
	name, _, _ := strings.Cut(argv[1], "=")
	if len(name) < 3 {
		return false
	}
	for _, o := range refOptions {
		if o.dest != "" && strings.HasPrefix(o.name, name) {
			return true
		}
	}
	return false
}

// argKind is argparse's classification of one argument string.
type argKind byte

const (
	kindPositional argKind = 'A'
	kindOption     argKind = 'O'
	kindDashDash   argKind = '-'
)

type classified struct {
	kind     argKind
	opt      *refOption // nil for an unknown option
	used     string     // the option string it resolved to
	explicit *string    // the value after '=' (or after a short option)
}

// parseRefArgs parses args (argv without the program name).
func parseRefArgs(args []string) (refArgs, error) {
	cls, err := classifyAll(args)
	if err != nil {
		return refArgs{}, err
	}
	out := refArgs{values: map[string]string{}}
	var extras []string
	for i := 0; i < len(args); {
		c := cls[i]
		if c.kind != kindOption {
			extras = append(extras, args[i])
			i++
			continue
		}
		if c.opt == nil {
			extras = append(extras, args[i])
			i++
			continue
		}
		switch {
		case c.opt.dest == "":
			if err := helpExplicit(c); err != nil {
				return refArgs{}, err
			}
			return refArgs{}, errRefHelp
		case c.opt.flag:
			if c.explicit != nil {
				return refArgs{}, usageErr("argument %s: ignored explicit argument %s", c.opt.name, pycompat.Repr(*c.explicit))
			}
			out.parallel = true
			i++
		case c.explicit != nil:
			out.values[c.opt.dest] = *c.explicit
			i++
		default:
			// An option's single value must be the next argument, and it
			// must not look like an option (nor be the "--" separator).
			if i+1 >= len(args) || cls[i+1].kind != kindPositional {
				return refArgs{}, usageErr("argument %s: expected one argument", c.opt.name)
			}
			out.values[c.opt.dest] = args[i+1]
			i += 2
		}
	}
	var missing []string
	for _, d := range refRequired {
		if _, ok := out.values[d]; !ok {
			missing = append(missing, "--"+d)
		}
	}
	if len(missing) > 0 {
		return refArgs{}, usageErr("the following arguments are required: %s", strings.Join(missing, ", "))
	}
	if len(extras) > 0 {
		return refArgs{}, usageErr("unrecognized arguments: %s", strings.Join(extras, " "))
	}
	return out, nil
}

// helpExplicit handles a value glued to -h: "-hh" is help twice, "-hx" and
// "--help=x" are errors naming the rest.
func helpExplicit(c classified) error {
	if c.explicit == nil {
		return nil
	}
	rest := *c.explicit
	if c.used == "-h" {
		for rest != "" && rest[0] == 'h' {
			rest = rest[1:]
		}
		if rest == "" {
			return nil
		}
	}
	return usageErr("argument -h/--help: ignored explicit argument %s", pycompat.Repr(rest))
}

// classifyAll classifies every argument first, as argparse does, so an
// ambiguous prefix anywhere is reported before any other error.
func classifyAll(args []string) ([]classified, error) {
	out := make([]classified, len(args))
	for i, a := range args {
		if a == "--" {
			out[i] = classified{kind: kindDashDash}
			for j := i + 1; j < len(args); j++ {
				out[j] = classified{kind: kindPositional}
			}
			break
		}
		c, err := classify(a)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func classify(a string) (classified, error) {
	if a == "" || a[0] != '-' {
		return classified{kind: kindPositional}, nil
	}
	if o := refLookup(a); o != nil {
		return classified{kind: kindOption, opt: o, used: a}, nil
	}
	if len(a) == 1 {
		return classified{kind: kindPositional}, nil
	}
	if name, val, ok := strings.Cut(a, "="); ok {
		if o := refLookup(name); o != nil {
			return classified{kind: kindOption, opt: o, used: name, explicit: &val}, nil
		}
	}
	matches := prefixMatches(a)
	switch {
	case len(matches) > 1:
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = m.used
		}
		return classified{}, usageErr("ambiguous option: %s could match %s", a, strings.Join(names, ", "))
	case len(matches) == 1:
		return matches[0], nil
	case isNegativeNumber(a), strings.Contains(a, " "):
		return classified{kind: kindPositional}, nil
	}
	return classified{kind: kindOption}, nil
}

func refLookup(name string) *refOption {
	for i := range refOptions {
		if refOptions[i].name == name {
			return &refOptions[i]
		}
	}
	return nil
}

// prefixMatches is argparse's abbreviation search: a "--" argument
// matches every long option it is a prefix of (its "=value" set aside); a
// single-dash one matches a short option glued to its value ("-hx") or an
// option string it is a prefix of.
func prefixMatches(a string) []classified {
	var out []classified
	if a[1] == '-' {
		prefix, val, hasVal := strings.Cut(a, "=")
		for i := range refOptions {
			o := &refOptions[i]
			if strings.HasPrefix(o.name, prefix) {
				c := classified{kind: kindOption, opt: o, used: o.name}
				if hasVal {
					c.explicit = &val
				}
				out = append(out, c)
			}
		}
		return out
	}
	short, glued := a[:2], a[2:]
	for i := range refOptions {
		o := &refOptions[i]
		switch {
		case o.name == short:
			out = append(out, classified{kind: kindOption, opt: o, used: o.name, explicit: &glued})
		case strings.HasPrefix(o.name, a):
			out = append(out, classified{kind: kindOption, opt: o, used: o.name})
		}
	}
	return out
}

// isNegativeNumber is argparse's '^-\d+$|^-\d*\.\d+$' (\d: any Unicode
// decimal digit): such arguments are values, not options.
func isNegativeNumber(a string) bool {
	s := a[1:]
	intPart, frac, dot := strings.Cut(s, ".")
	if !dot {
		return s != "" && allDigits(s)
	}
	return (intPart == "" || allDigits(intPart)) && frac != "" && allDigits(frac)
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
