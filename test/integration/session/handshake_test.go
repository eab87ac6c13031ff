//go:build linux

package session

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// TestInitWithoutHandshake: a program given as --init that never reads the
// launch prelude (so the peer never ran) fails as "not launched" (127)
// with one line, whatever its own exit code; a real init's own codes stay.
func TestInitWithoutHandshake(t *testing.T) {
	b := get("namespace")
	for _, fake := range []string{"/bin/true", "/bin/false"} {
		t.Run(fake, func(t *testing.T) {
			marker := t.TempDir() + "/ran"
			args := append([]string{"session", "--init", fake}, b.Flags(t, backends.Busybox)...)
			args = append(args, "--", "/bin/sh", "-c", "touch "+marker)
			cmd := exec.Command(testutil.Binary(t, "loki-supervise"), args...)
			r := run(t, cmd, "", generous)
			if r.code != 127 {
				t.Fatalf("exit %d, want 127; stderr %q", r.code, r.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 ||
				!strings.Contains(lines[0], "without reading the launch prelude") {
				t.Fatalf("stderr %q: want one line about the prelude", r.stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the peer ran")
			}
		})
	}
	// A real init keeps its own exit codes, fast or slow peers alike.
	for _, tc := range []struct {
		script, stdin string
		want          int
	}{
		{"exit 0", "", 0}, {"exit 3", "", 3}, {"cat", "some input\n", 0},
	} {
		r := run(t, supervise(t, b, nil, "sh", "-c", tc.script), tc.stdin, generous)
		if r.code != tc.want || r.stdout != tc.stdin {
			t.Fatalf("%q: exit %d (want %d), stdout %q, stderr %q", tc.script, r.code, tc.want, r.stdout, r.stderr)
		}
	}
}
