//go:build linux

package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestEOFByKindOfStdin: only a pipe or a socket is a client that can
// leave. From cron or CI (stdin /dev/null) or with a file as stdin, the
// agent runs to its end and its code is the session's: before, every
// backend but none cut it 1 s after EOF with 0 and "done" was never
// printed. --eof end keeps the cut for those, --eof wait (and its older
// spelling --wait-after-eof) waits on a pipe too.
func TestEOFByKindOfStdin(t *testing.T) {
	const script = "sleep 2; echo done; exit 4"
	file := filepath.Join(t.TempDir(), "request")
	if err := os.WriteFile(file, []byte("request\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, b := range relayBackends() {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				stdin string // a path; "" is a pipe at EOF at once
				flags []string
				code  int
				out   string
			}{
				{"dev null waits", os.DevNull, nil, 4, "done\n"},
				{"file waits", file, nil, 4, "done\n"},
				{"pipe with --eof wait", "", []string{"--eof", "wait"}, 4, "done\n"},
				{"dev null with --eof end is cut", os.DevNull, []string{"--eof", "end"}, 0, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cmd := supervise(t, b, tc.flags, "sh", "-c", script)
					var r result
					if tc.stdin == "" {
						r = run(t, cmd, "", generous)
					} else {
						in, err := os.Open(tc.stdin)
						if err != nil {
							t.Fatal(err)
						}
						defer in.Close()
						var out, errb syncBuffer
						cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errb
						if err := cmd.Start(); err != nil {
							t.Fatal(err)
						}
						r = result{code: testutil.WaitExit(t, cmd, generous), stdout: out.String(), stderr: errb.String()}
					}
					if r.code != tc.code || r.stdout != tc.out {
						t.Fatalf("exit %d, stdout %q, stderr %q; want %d and %q", r.code, r.stdout, r.stderr, tc.code, tc.out)
					}
				})
			}
		})
	}
}

// TestMissingCommandNamed: a command that is nowhere is refused with
// loki-init's code (125) and one line that names it (before: the init's
// line named no command, and none said 127).
func TestMissingCommandNamed(t *testing.T) {
	for _, b := range []backend{get("namespace"), get("none")} {
		t.Run(b.Name, func(t *testing.T) {
			for _, cmd := range []string{"no-such-agent-h34", "/nonexistent/agent"} {
				r := run(t, supervise(t, b, nil, cmd, "--secret-arg"), "", generous)
				lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
				if r.code != 125 || len(lines) != 1 || !strings.Contains(r.stderr, "launch-not-executable: "+cmd+":") || strings.Contains(r.stderr, "secret") {
					t.Fatalf("%s: exit %d, stderr %q; want 125 and one line naming it", cmd, r.code, r.stderr)
				}
			}
		})
	}
}
