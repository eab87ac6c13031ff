package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
)

// run runs the CLI main runs in-process and returns its exit code and
// both streams.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	argv := append([]string{"loki-supervise"}, args...)
	return runApp(t, appFor(argv), argv)
}

func runApp(t *testing.T, app *cli.App, argv []string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	app.Writer = &out
	err := app.Run(argv)
	if err != nil && !exitcode.Classified(err) {
		err = exitcode.Usage(err)
	}
	msg := ""
	if r := exitcode.Report(err); r != nil {
		msg = r.Error()
	}
	return exitcode.Code(err), out.String(), msg
}

func TestCLIAnswers(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // the one stderr line, exactly ("" = none)
	}{
		{"help", []string{"help"}, 0, "Sessions:\n   session", ""},
		{"--help", []string{"--help"}, 0, "Start here:", ""},
		{"help of a command", []string{"help", "session"}, 0, "loki-supervise session", ""},
		{"typo of a command", []string{"sesion"}, 2, "", `unknown command "sesion": did you mean "session"? (see 'loki-supervise --help')`},
		{"far from any command", []string{"xyzzy"}, 2, "", `unknown command "xyzzy" (see 'loki-supervise --help')`},
		{"typo of a subcommand", []string{"proc", "tokn"}, 2, "", `proc: unknown command "tokn": did you mean "token"? (see 'loki-supervise proc --help')`},
		{"typo of a flag", []string{"session", "--isolaton", "oci"}, 2, "", `session: unknown flag --isolaton: did you mean --isolation? (see 'loki-supervise session --help')`},
		{"bad flag value", []string{"session", "--lease-duration", "soon", "--", "true"}, 2, "", `session: invalid value "soon" for flag -lease-duration: parse error (see 'loki-supervise session --help')`},
		{"json alone", []string{"--json"}, 2, "", "--json goes with --version (each command has its own --json)"},
		{"hide a typo", []string{"session", "--no-policy", "--isolation", "namespace", "--hide", "/nonexistent/.shh", "--", "true"}, 2, "",
			"session: --hide /nonexistent/.shh: no such file or directory here, so it would hide nothing (a typo?)"},
		{"version", []string{"--version"}, 0, "loki-supervise ", ""},
		{"version command", []string{"version"}, 0, "loki-supervise ", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, msg := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || msg != tc.err {
				t.Fatalf("exit %d, stderr %q, stdout %.200q; want %d, %q, stdout with %q", code, msg, out, tc.code, tc.err, tc.out)
			}
			if tc.code == 2 && out != "" {
				t.Fatalf("a usage error printed %d bytes of help around its line", len(out))
			}
		})
	}
}

// TestSessionAloneAnswersAsTheWholeCLI: the app of the session command
// alone, which main runs for a session, answers help, bad flags and bad
// arguments byte for byte as the whole CLI does.
func TestSessionAloneAnswersAsTheWholeCLI(t *testing.T) {
	for _, args := range [][]string{
		{"session", "--help"},
		{"session", "-h"},
		{"session", "--help", "--", "true"},
		{"session", "--isolaton", "oci"},
		{"session", "--lease-duration", "soon", "--", "true"},
		{"session", "--pids-max", "many", "--", "true"},
		{"session", "-x"},
		{"session", "--no-policy", "--isolation", "namespace", "--hide", "/nonexistent/.shh", "--", "true"},
		{"session", "--isolation", "bogus", "--", "true"},
		// Not "session help": urfave then appends its global help
		// command to itself, and the completion tests recurse forever.
	} {
		argv := append([]string{"loki-supervise"}, args...)
		alone := appFor(argv)
		if len(alone.Commands) != 1 {
			t.Fatalf("%q: appFor built %d commands, want session alone", args, len(alone.Commands))
		}
		code, out, msg := runApp(t, alone, argv)
		wcode, wout, wmsg := runApp(t, newApp(), argv)
		if code != wcode || out != wout || msg != wmsg {
			t.Errorf("%q: session alone: exit %d, stderr %q, stdout %q;\nwhole CLI: exit %d, stderr %q, stdout %q",
				args, code, msg, out, wcode, wmsg, wout)
		}
	}
}

// The main job comes first in --help, and every command has a heading.
func TestHelpListsEveryCommandOnceSessionFirst(t *testing.T) {
	_, out, _ := runCLI(t, "--help")
	first := strings.Index(out, "   session ")
	for _, c := range newApp().Commands {
		n := strings.Count(out, "\n   "+c.Name+" ")
		if n != 1 {
			t.Errorf("%s is listed %d times", c.Name, n)
		}
		if i := strings.Index(out, "\n   "+c.Name+" "); c.Name != "session" && i < first {
			t.Errorf("%s comes before session", c.Name)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, _ := runCLI(t, "--version", "--json")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["program"] != "loki-supervise" || v["go"] == "" || v["platform"] == "" {
		t.Fatalf("exit %d, %q", code, out)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one line: %q", out)
	}
}

// A binary built by make from a checkout names its commit: the Makefile's
// stamp reaches both binaries (the toolchain's own VCS stamp is off on
// machines with GOFLAGS=-buildvcs=false).
func TestMakeBuildNamesTheCommit(t *testing.T) {
	dir := os.Getenv("LOKI_BIN_DIR")
	if dir == "" {
		t.Skip("LOKI_BIN_DIR is not set: no binaries built by make to check")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, bin := range []string{"loki-supervise", "loki-init"} {
		out, err := exec.Command(dir+"/"+bin, "--version", "--json").Output()
		if err != nil {
			t.Fatalf("%s --version --json: %v", bin, err)
		}
		var v struct{ Program, Commit string }
		if err := json.Unmarshal(out, &v); err != nil || v.Program != bin {
			t.Fatalf("%s: %q (%v)", bin, out, err)
		}
		if v.Commit != strings.TrimSpace(string(head)) {
			t.Errorf("%s names commit %q, the checkout is at %s", bin, v.Commit, head)
		}
	}
}

// verify-proof and probe print one JSON object whatever happens, as the
// README promises the programs that read them.
func TestJSONCommandsPrintOneObjectOnFailure(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"verify-proof of a missing file", []string{"verify-proof", dir + "/missing.json"}, 2},
	}
	if runtime.GOOS != "darwin" {
		cases = append(cases, struct {
			name string
			args []string
			code int
		}{"probe seatbelt off macOS", []string{"probe", "seatbelt", "--workspace-root", dir, "--run-sh", dir + "/run.sh"}, 125})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, msg := runCLI(t, tc.args...)
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil || v["ok"] != false || v["reason"] == "" {
				t.Fatalf("stdout %q is not one object with ok false and a reason (%v)", out, err)
			}
			if code != tc.code || msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("exit %d, stderr %q; want %d and one line", code, msg, tc.code)
			}
		})
	}
}

// TestGivenFlags: givenFlags names exactly the flags IsSet reports, by
// a long name, a short alias or an environment variable.
func TestGivenFlags(t *testing.T) {
	t.Setenv("LOKI_ISOLATION", "none")
	for _, args := range [][]string{
		{"session", "--fs", "host", "-t", "--write", "/tmp", "--pids-max=9", "--", "true"},
		{"session", "--", "true"},
	} {
		app, ran := newApp(), false
		for _, cmd := range app.Commands {
			if cmd.Name != "session" {
				continue
			}
			cmd.Action = func(c *cli.Context) error {
				ran = true
				given := givenFlags(c)
				for _, f := range c.Command.Flags {
					if n := f.Names()[0]; c.IsSet(n) != given[n] {
						t.Errorf("%q: %s: IsSet %v, givenFlags %v", args, n, c.IsSet(n), given[n])
					}
				}
				if !given["isolation"] {
					t.Errorf("%q: LOKI_ISOLATION not seen", args)
				}
				return nil
			}
		}
		if err := app.Run(append([]string{"loki-supervise"}, args...)); err != nil || !ran {
			t.Fatalf("%q: %v (ran %v)", args, err, ran)
		}
	}
}
