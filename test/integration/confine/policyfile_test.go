//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// policySession runs a default session from workspace with a HOME of its
// own (so no user policy file of the machine's is read) and returns the
// exit code, stdout and stderr.
func policySession(t *testing.T, workspace string, env []string, args ...string) (int, string, string) {
	t.Helper()
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	home := t.TempDir()
	full := append([]string{"session", "--init", init, "--control-root", t.TempDir(), "--wait-after-eof"}, args...)
	cmd := exec.Command(sup, full...)
	cmd.Dir = workspace
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}, env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return testutil.ExitCode(err), out.String(), errOut.String()
}

// The workspace's .loki/policy.toml holds what the flags hold: a setting
// in it applies, a flag overrides it, a profile is laid over it, and a
// bad key or value is refused naming the file and line.
func TestPolicyFile(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".loki"), 0o700); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(ws, ".loki", "policy.toml")
	put := func(body string) {
		t.Helper()
		if err := os.WriteFile(policy, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Lines in /proc/net/dev: 3 with only lo (its own network namespace).
	netLines := []string{"--", "sh", "-c", "wc -l < /proc/net/dev"}
	put("network = \"none\"\n\n[profile.online]\nnetwork = \"host\"\n")
	cases := []struct {
		name  string
		args  []string
		lines string
	}{
		{"the file applies", nil, "3"},
		{"a flag overrides it", []string{"--network", "host"}, ""},
		{"a profile is laid over it", []string{"--profile", "online"}, ""},
		{"--no-policy reads none", []string{"--no-policy"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := policySession(t, ws, nil, append(tc.args, netLines...)...)
			got := strings.TrimSpace(out)
			if code != 0 || (tc.lines == "3") != (got == "3") {
				t.Fatalf("exit %d, /proc/net/dev has %q lines (stderr %q); want own network: %v", code, got, errOut, tc.lines == "3")
			}
		})
	}

	refusals := []struct {
		name, body, want string
	}{
		{"unknown key", "network = \"none\"\nwirte = [\"x\"]\n", policy + `:2: unknown key "wirte"`},
		{"bad value", "\nnetwork = \"wifi\"\n", policy + `:2: network: `},
		{"a workspace file passes no secrets", "env = [\"AWS_SECRET_ACCESS_KEY\"]\n", "cannot pass variables from your environment"},
		{"a workspace file writes only inside", "write = [\"/etc\"]\n", "cannot make a path outside the workspace writable"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.body)
			code, out, errOut := policySession(t, ws, nil, "--", "echo", "ran")
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing run, one line with %q", code, out, errOut, tc.want)
			}
		})
	}

	// A file's hide list may name what this machine lacks; the flag may not.
	put("hide = [\"/nonexistent/.aws\"]\n")
	if code, _, errOut := policySession(t, ws, nil, "--", "true"); code != 0 {
		t.Fatalf("a missing hide path from the file: exit %d (%q)", code, errOut)
	}
	if code, _, errOut := policySession(t, ws, nil, "--hide", "/nonexistent/.shh", "--", "true"); code != 2 || !strings.Contains(errOut, "a typo?") {
		t.Fatalf("--hide of a missing path: exit %d (%q), want 2 naming the typo", code, errOut)
	}

	// The agent cannot rewrite the project's policy for the next session.
	put("hide = [\"/srv\"]\n")
	code, _, errOut := policySession(t, ws, nil, "--", "sh", "-c", "echo 'fs = \"host\"' >> .loki/policy.toml")
	if body, _ := os.ReadFile(policy); code == 0 || string(body) != "hide = [\"/srv\"]\n" {
		t.Fatalf("the agent rewrote .loki/policy.toml: exit %d, now %q (stderr %q)", code, body, errOut)
	}

	// A built-in profile passes the agent's variables, and only those.
	put("")
	code, out, errOut := policySession(t, ws, []string{"ANTHROPIC_API_KEY=sk-test", "OPENAI_API_KEY=sk-other"},
		"--profile", "claude", "--", "sh", "-c", `echo "${ANTHROPIC_API_KEY:-unset} ${OPENAI_API_KEY:-unset}"`)
	if code != 0 || strings.TrimSpace(out) != "sk-test unset" {
		t.Fatalf("--profile claude: exit %d, %q (stderr %q)", code, out, errOut)
	}
}
