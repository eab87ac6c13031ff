package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// The manual page names every command, subcommand and visible flag.
func TestManNamesEveryCommandAndFlag(t *testing.T) {
	code, page, msg := runCLI(t, "man")
	if code != 0 {
		t.Fatalf("man: exit %d: %s", code, msg)
	}
	unroff := strings.ReplaceAll(page, `\-`, "-")
	walk(newApp().Commands, "", func(c *cli.Command, path string) {
		if c.Hidden {
			return
		}
		if !strings.Contains(unroff, ".B loki-supervise"+path+"\n") {
			t.Errorf("no entry for %q", path)
		}
		for _, f := range c.Flags {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				d := "--" + n
				if len(n) == 1 {
					d = "-" + n
				}
				if !strings.Contains(unroff, `\fB`+d+`\fR`) {
					t.Errorf("%s: flag %s missing", path, d)
				}
			}
		}
	})
}

// Each value completion offers is one the flag's usage names.
func TestFlagChoicesAreTheFlagsOwn(t *testing.T) {
	found := map[string]bool{}
	walk(newApp().Commands, "", func(c *cli.Command, path string) {
		for _, f := range c.Flags {
			vals, ok := flagChoices[f.Names()[0]]
			d, isDoc := f.(cli.DocGenerationFlag)
			if !ok || !isDoc {
				continue
			}
			found[f.Names()[0]] = true
			for _, v := range vals {
				if !strings.Contains(d.GetUsage(), v) {
					t.Errorf("%s --%s: completes %q, which its usage does not name: %q", path, f.Names()[0], v, d.GetUsage())
				}
			}
		}
	})
	for name := range flagChoices {
		if !found[name] {
			t.Errorf("completion lists values for --%s, which no command has", name)
		}
	}
}

// bash, with the generated script loaded, completes what a user types.
func TestBashCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	code, script, msg := runCLI(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: %d %s", code, msg)
	}
	f := filepath.Join(t.TempDir(), "c.bash")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string // the words typed; the last is being completed
		want []string
		not  []string
	}{
		{"loki-supervise session --isolation ", []string{"namespace", "oci", "docker", "none"}, nil},
		{"loki-supervise session --isolation d", []string{"docker"}, []string{"oci"}},
		{"loki-supervise ses", []string{"session"}, nil},
		{"loki-supervise session --allow", []string{"--allow-host"}, nil},
		{"loki-supervise proc t", []string{"token"}, nil},
		{"loki-supervise session --network ", []string{"host", "loopback", "none"}, nil},
		{"loki-supervise completion ", nil, []string{"session"}},
	}
	for _, tc := range cases {
		words := strings.Split(tc.line, " ")
		var arr []string
		for _, w := range words {
			arr = append(arr, "'"+w+"'")
		}
		prog := "source " + f + "\nCOMP_WORDS=(" + strings.Join(arr, " ") + ")\nCOMP_CWORD=" +
			itoa(len(words)-1) + "\n_loki_supervise\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v: %s", tc.line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !contains(got, w) {
				t.Errorf("%q completes %v, want %s among them", tc.line, got, w)
			}
		}
		for _, w := range tc.not {
			if contains(got, w) {
				t.Errorf("%q completes %v, which must not hold %s", tc.line, got, w)
			}
		}
	}
}

// The zsh and fish scripts are generated from the same definitions.
func TestZshAndFishScripts(t *testing.T) {
	for _, sh := range []string{"zsh", "fish"} {
		code, script, msg := runCLI(t, "completion", sh)
		if code != 0 || !strings.Contains(script, "namespace oci docker none") || !strings.Contains(script, "session") {
			t.Errorf("completion %s: exit %d %s; %d bytes", sh, code, msg, len(script))
		}
	}
	if code, _, msg := runCLI(t, "completion", "tcsh"); code != 2 || !strings.Contains(msg, "bash, zsh or fish") {
		t.Errorf("completion tcsh: %d %q", code, msg)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
