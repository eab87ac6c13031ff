//go:build linux

package faults

import (
	"os"
	"strings"
	"testing"
)

// TestTimingFlagsRefused: a zero or negative duration is a usage error
// (exit 2, one line naming the flag), never quietly replaced by the
// default.
func TestTimingFlagsRefused(t *testing.T) {
	env := baseEnv(t.TempDir())
	for _, flag := range []string{"lease-duration", "renew-interval", "poll-interval", "grace", "stop-timeout"} {
		for _, v := range []string{"0", "0s", "-1s"} {
			t.Run(flag+"="+v, func(t *testing.T) {
				marker := t.TempDir() + "/ran"
				o := cli(t, env, "session", "--isolation", "none", "--"+flag, v, "--", "/bin/sh", "-c", "touch "+marker)
				if o.code != 2 {
					t.Fatalf("exit %d, want 2; stderr %q", o.code, o.stderr)
				}
				requireNoCrash(t, o.stderr)
				requireOneLine(t, o.stderr, "--"+flag)
				if _, err := os.Stat(marker); err == nil {
					t.Fatal("the peer ran")
				}
			})
		}
	}
}

// TestRunMissingCommand: run with a command that does not exist exits 127
// and says why, not only the minted id.
func TestRunMissingCommand(t *testing.T) {
	env := baseEnv(t.TempDir())
	for _, cmd := range []string{"/nonexistent/agent", "no-such-agent-h17"} {
		o := cli(t, env, "run", "--workspace", t.TempDir(), "--", cmd)
		if o.code != 127 {
			t.Fatalf("%s: exit %d, want 127; stderr %q", cmd, o.code, o.stderr)
		}
		requireNoCrash(t, o.stderr)
		requireOneLine(t, o.stderr, "runner command not found: "+cmd)
	}
}

// TestNoneMissingCwd: --isolation none with a cwd that is not there names
// the cwd, not the exec gate.
func TestNoneMissingCwd(t *testing.T) {
	env := baseEnv(t.TempDir())
	o := cli(t, env, "session", "--isolation", "none", "--cwd", "/nonexistent-h17", "--", "/bin/true")
	if o.code != 127 {
		t.Fatalf("exit %d, want 127; stderr %q", o.code, o.stderr)
	}
	requireNoCrash(t, o.stderr)
	requireOneLine(t, o.stderr, "working directory /nonexistent-h17 does not exist")
	if strings.Contains(o.stderr, "/proc/self/exe") {
		t.Fatalf("stderr blames the exec gate: %q", o.stderr)
	}
}
