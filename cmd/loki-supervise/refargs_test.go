package main

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/exitcode"
)

// full is a complete reference command line, with the options spelled out.
var full = []string{"--execution-id", "ID", "--run-sh", "R", "--workspace", "W",
	"--loki-dir", "L", "--spec", "S", "--provider", "P"}

func with(extra ...string) []string { return append(append([]string{}, full...), extra...) }

func fullValues() map[string]string {
	return map[string]string{"execution-id": "ID", "run-sh": "R", "workspace": "W",
		"loki-dir": "L", "spec": "S", "provider": "P"}
}

// TestParseRefArgs: each row is what Python 3.11's argparse does with the
// reference supervisor's parser for the same argv (checked against the
// reference itself by test/integration/dashboard when it is available).
func TestParseRefArgs(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		values   map[string]string // nil: fullValues()
		parallel bool
		err      string // "" ok, "help", or the argparse message
	}{
		{name: "exact", args: full},
		{name: "parallel", args: with("--parallel"), parallel: true},
		{name: "prefixes", args: []string{"--exec", "ID", "--run", "R", "--w", "W", "--l", "L", "--s", "S", "--prov", "P", "--pa"}, parallel: true},
		{name: "equals forms", args: []string{"--execution-id=ID", "--run-sh=R", "--works=W", "--loki-dir=L", "--spec=S", "--pr=P"}},
		{name: "value with equals sign", args: []string{"--exec", "a=b", "--run-sh", "R", "--workspace", "W", "--loki-dir", "L", "--spec", "S", "--provider=x=y"},
			values: map[string]string{"execution-id": "a=b", "run-sh": "R", "workspace": "W", "loki-dir": "L", "spec": "S", "provider": "x=y"}},
		{name: "empty explicit value", args: append(with(), "--spec="), values: map[string]string{"execution-id": "ID", "run-sh": "R", "workspace": "W", "loki-dir": "L", "spec": "", "provider": "P"}},
		{name: "last repeat wins", args: with("--exec", "ID2"), values: map[string]string{"execution-id": "ID2", "run-sh": "R", "workspace": "W", "loki-dir": "L", "spec": "S", "provider": "P"}},
		{name: "negative number is a value", args: []string{"--exec", "-1", "--run-sh", "R", "--workspace", "W", "--loki-dir", "L", "--spec", "S", "--provider", "P"},
			values: map[string]string{"execution-id": "-1", "run-sh": "R", "workspace": "W", "loki-dir": "L", "spec": "S", "provider": "P"}},
		{name: "value with a space that starts with a dash", args: []string{"--exec", "-x y", "--run-sh", "R", "--workspace", "W", "--loki-dir", "L", "--spec", "S", "--provider", "P"},
			values: map[string]string{"execution-id": "-x y", "run-sh": "R", "workspace": "W", "loki-dir": "L", "spec": "S", "provider": "P"}},
		{name: "ambiguous prefix", args: with("--p", "x"), err: "ambiguous option: --p could match --provider, --parallel"},
		{name: "ambiguous with value", args: with("--p=x"), err: "ambiguous option: --p=x could match --provider, --parallel"},
		{name: "ambiguous reported before anything else", args: []string{"--exec", "--p"}, err: "ambiguous option: --p could match --provider, --parallel"},
		{name: "bare --= matches everything", args: []string{"--=x"}, err: "ambiguous option: --=x could match --help, --execution-id, --run-sh, --workspace, --loki-dir, --spec, --provider, --parallel"},
		{name: "stray positional", args: with("extra"), err: "unrecognized arguments: extra"},
		{name: "stray positionals in order", args: append([]string{"a"}, with("b")...), err: "unrecognized arguments: a b"},
		{name: "unknown option", args: with("--bogus"), err: "unrecognized arguments: --bogus"},
		{name: "unknown option with value", args: with("--bogus=1", "-x"), err: "unrecognized arguments: --bogus=1 -x"},
		{name: "single-dash prefix is not an abbreviation", args: with("-e", "1"), err: "unrecognized arguments: -e 1"},
		{name: "loki-only flag refused", args: with("--hard-timeout", "5"), err: "unrecognized arguments: --hard-timeout 5"},
		{name: "double dash and after", args: with("--", "x"), err: "unrecognized arguments: -- x"},
		{name: "missing value at end", args: []string{"--exec"}, err: "argument --execution-id: expected one argument"},
		{name: "missing value before an option", args: []string{"--exec", "1", "--run-sh", "--w"}, err: "argument --run-sh: expected one argument"},
		{name: "value cannot follow --", args: []string{"--exec", "--", "1"}, err: "argument --execution-id: expected one argument"},
		{name: "missing required", args: []string{"--exec", "1", "--spec", "S"}, err: "the following arguments are required: --run-sh, --workspace, --loki-dir, --provider"},
		{name: "nothing", args: nil, err: "the following arguments are required: --execution-id, --run-sh, --workspace, --loki-dir, --spec, --provider"},
		{name: "required reported before stray", args: []string{"--exec", "1", "x"}, err: "the following arguments are required: --run-sh, --workspace, --loki-dir, --spec, --provider"},
		{name: "flag with value", args: with("--parallel=x"), err: "argument --parallel: ignored explicit argument 'x'"},
		{name: "flag with empty value", args: with("--pa="), err: "argument --parallel: ignored explicit argument ''"},
		{name: "flag value quoting", args: with(`--parallel=it's`), err: `argument --parallel: ignored explicit argument "it's"`},
		{name: "help", args: []string{"--help"}, err: "help"},
		{name: "help prefix", args: []string{"--h"}, err: "help"},
		{name: "short help twice", args: []string{"-hh"}, err: "help"},
		{name: "help wins over later errors", args: []string{"--bogus", "-h", "--exec"}, err: "help"},
		{name: "earlier error wins over help", args: []string{"--exec", "--help"}, err: "argument --execution-id: expected one argument"},
		{name: "short help with glued value", args: []string{"-hhx"}, err: "argument -h/--help: ignored explicit argument 'x'"},
		{name: "long help with value", args: []string{"--help=x"}, err: "argument -h/--help: ignored explicit argument 'x'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRefArgs(tc.args)
			switch {
			case tc.err == "help":
				if !errors.Is(err, errRefHelp) {
					t.Fatalf("parse %q: %v, want help", tc.args, err)
				}
				return
			case tc.err != "":
				var ue *refUsageError
				if !errors.As(err, &ue) || ue.msg != tc.err {
					t.Fatalf("parse %q: error %v, want %q", tc.args, err, tc.err)
				}
				return
			case err != nil:
				t.Fatalf("parse %q: %v", tc.args, err)
			}
			want := tc.values
			if want == nil {
				want = fullValues()
			}
			if !maps.Equal(got.values, want) || got.parallel != tc.parallel {
				t.Errorf("parse %q = %v parallel=%v, want %v parallel=%v", tc.args, got.values, got.parallel, want, tc.parallel)
			}
		})
	}
}

func TestIsReferenceArgv(t *testing.T) {
	cases := []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/loki-supervise", "build", "--execution-id", "x"}, false},
		{[]string{"loki-supervise", "--execution-id", "x"}, true},
		{[]string{"loki-supervise", "--exec=x"}, true},
		{[]string{"loki-supervise", "--prov", "x"}, true},
		{[]string{"loki-supervise", "--p", "x"}, true}, // then refused as ambiguous
		{[]string{"loki-supervise", "--help"}, false},
		{[]string{"loki-supervise", "--h"}, false},
		{[]string{"loki-supervise", "--"}, false},
		{[]string{"loki-supervise", "--bogus"}, false},
		{[]string{"loki-supervise"}, false},
		{[]string{"/opt/dash/loki-build-supervisor"}, true},
		{[]string{"/opt/dash/build_supervisor.py", "--help"}, true},
	}
	for _, tc := range cases {
		if got := isReferenceArgv(tc.argv); got != tc.want {
			t.Errorf("isReferenceArgv(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

func TestRunReferenceUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := exitcode.Code(runReference([]string{"/x/loki-build-supervisor", "--exec", "1", "stray"}, &out, &errb)); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	want := "loki-build-supervisor: error: the following arguments are required: --run-sh, --workspace, --loki-dir, --spec, --provider\n"
	if errb.String() != want || out.Len() != 0 {
		t.Errorf("stderr %q stdout %q, want one line %q", errb.String(), out.String(), want)
	}
	out.Reset()
	errb.Reset()
	if code := exitcode.Code(runReference([]string{"loki-build-supervisor", "-h"}, &out, &errb)); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	if !strings.HasPrefix(out.String(), "usage: loki-build-supervisor [-h] --execution-id") || errb.Len() != 0 {
		t.Errorf("help output %q, stderr %q", out.String(), errb.String())
	}
}

// FuzzParseRefArgs: any argv is either refused with a message or gives
// every required option a value; nothing panics.
func FuzzParseRefArgs(f *testing.F) {
	f.Add(strings.Join(full, "\x00"))
	f.Add("--p\x00x")
	f.Add("-hhx")
	f.Add("--exec=\x00--\x00-1")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		got, err := parseRefArgs(args)
		var ue *refUsageError
		switch {
		case errors.Is(err, errRefHelp):
		case errors.As(err, &ue):
			if ue.msg == "" || strings.Contains(ue.msg, "\n") && !strings.Contains(joined, "\n") {
				t.Fatalf("message %q", ue.msg)
			}
		case err != nil:
			t.Fatalf("unexpected error %v", err)
		default:
			for _, d := range refRequired {
				if _, ok := got.values[d]; !ok {
					t.Fatalf("accepted %q without --%s", args, d)
				}
			}
		}
	})
}
