//go:build linux

package confine

import (
	"os"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil/backends"
)

// userProbe prints the peer's ids and whether it can write its control
// dir (the last argument of loki-init, PID 1).
const userProbe = `
echo "uid=$(id -u)"
echo "gid=$(id -g)"
echo "groups=$(id -G)"
c=$(tr "\0" "\n" < /proc/1/cmdline | tail -n 1)
echo "control=$c"
if printf "" >> "$c/lease" 2>/dev/null; then echo "lease=writable"; else echo "lease=refused"; fi
if touch "$c/extra" 2>/dev/null; then echo "dir=writable"; else echo "dir=refused"; fi
echo "leasebytes=$(cat "$c/lease" 2>/dev/null | wc -c)"
`

// TestUser: --user runs loki-init and the peer as that uid and gid (and
// only that group). The init must still read its lease (the session would
// die with 124 otherwise) and the peer must not write it or its dir.
func TestUser(t *testing.T) {
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			code, out, stderr := session(t, b, []string{"--user", "65534:65534"}, "sh", "-c", userProbe)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			r := results(out)
			want := map[string]string{"uid": "65534", "gid": "65534", "groups": "65534", "lease": "refused", "dir": "refused"}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("%s=%q, want %q (output %q)", k, r[k], v, out)
				}
			}
			if r["control"] == "" {
				t.Errorf("no control dir found: %q", out)
			}
		})
	}
}

// TestUserRefusedWithoutRoot: an unprivileged supervisor's user namespace
// maps only its own uid, so another --user cannot be given: one line,
// exit 127, and the peer never runs.
func TestUserRefusedWithoutRoot(t *testing.T) {
	for _, b := range rows() {
		if !b.Unprivileged {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			code, out, stderr := session(t, b, []string{"--user", "0:0"}, "sh", "-c", "echo ran")
			if code != 127 || strings.Contains(out, "ran") {
				t.Fatalf("exit %d, stdout %q: want 127 and no run", code, out)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "--user") {
				t.Fatalf("stderr %q: want one line naming --user", stderr)
			}
		})
	}
}

// TestConfinementRefusedByNone: --isolation none cannot give a user or a
// network of its own, and says so instead of running unconfined.
func TestConfinementRefusedByNone(t *testing.T) {
	none := backends.Get("none")
	for _, flags := range [][]string{{"--user", "65534"}, {"--network", "none"}, {"--fs", "confined"},
		{"--write", os.TempDir()}, {"--hide", os.TempDir()}, {"--memory-max", "64M"}} {
		t.Run(strings.Join(flags, "="), func(t *testing.T) {
			code, out, stderr := session(t, none, flags, "sh", "-c", "echo ran")
			if code != 127 || strings.Contains(out, "ran") {
				t.Fatalf("exit %d, stdout %q: want 127 and no run", code, out)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 || stderr == "" {
				t.Fatalf("stderr %q: want one line", stderr)
			}
		})
	}
}
