//go:build linux

package soak

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestStdinEOFRule: a client that pipes one request in and closes stdin.
// By default loki-init follows the reference's single-shot rule (an agent
// still running 1 s after host stdin EOF is ended, exit 0); with
// --wait-after-eof the late answer and the agent's own code come through.
func TestStdinEOFRule(t *testing.T) {
	tl := needTools(t)
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		out   string
	}{
		{"default ends the session", nil, 0, ""},
		{"wait-after-eof hears the answer", []string{"--wait-after-eof"}, 3, "answer\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"session", "--init", tl.init, "--control-root", controlRoot(t)}, tc.flags...)
			args = append(args, "--", "/bin/sh", "-c", "cat >/dev/null; sleep 2; echo answer; exit 3")
			cmd := exec.Command(tl.supervise, args...)
			cmd.Env = baseEnv()
			cmd.Stdin = strings.NewReader("request\n")
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := testutil.WaitExit(t, cmd, time.Minute); code != tc.code || out.String() != tc.out {
				t.Fatalf("exit %d, stdout %q; want exit %d and %q", code, out.String(), tc.code, tc.out)
			}
		})
	}
}
