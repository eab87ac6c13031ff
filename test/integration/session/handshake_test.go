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

// TestInitOfAnotherBuild: the stage is given its policy by the
// supervisor of its own build. A loki-init of another build (given with
// --init) that finds a key it does not know, or a policy in another
// format, refuses to start (127, one line naming the fix) and the peer
// never runs: it never confines less than it was asked to. The wrapper
// stands for that other build: it edits the policy, then runs the real
// loki-init. (Before the stage's own format, JSON's decoder dropped an
// unknown key and the session ran.)
func TestInitOfAnotherBuild(t *testing.T) {
	b := get("namespace")
	init := testutil.Binary(t, "loki-init")
	for name, edit := range map[string]string{
		// A newer build's key, in the current format or in JSON.
		"unknown key": `case "$LOKI_STAGE_CONFINE" in
'{'*) LOKI_STAGE_CONFINE="{\"future_key\":1,${LOKI_STAGE_CONFINE#?}" ;;
*) LOKI_STAGE_CONFINE="${LOKI_STAGE_CONFINE%end*}future-key 1
end
" ;;
esac`,
		"JSON": `LOKI_STAGE_CONFINE='{"FS":"","Write":["/tmp"]}'`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.Chmod(dir, 0o755)
			wrapper := dir + "/loki-init"
			script := "#!/bin/sh\n" + edit + "\nexport LOKI_STAGE_CONFINE\nexec " + init + " \"$@\"\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"session", "--init", wrapper}, b.Flags(t, backends.Busybox)...)
			args = append(args, "--", "echo", "ran")
			r := run(t, exec.Command(testutil.Binary(t, "loki-supervise"), args...), "", generous)
			if r.code != 127 || r.stdout != "" {
				t.Fatalf("exit %d, want 127; stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 ||
				!strings.Contains(lines[0], "loki-supervise and its --init must come from the same build") {
				t.Fatalf("stderr %q: want one line naming the fix", r.stderr)
			}
		})
	}
}
