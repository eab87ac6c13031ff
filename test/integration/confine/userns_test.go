//go:build linux

package confine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// usernsProbe prints the peer's user-namespace map, whether it can read a
// root-only file of the host ($SECRET, outside every writable path and
// HOME), how it sees the workspace ($WS), and writes there.
const usernsProbe = `
set -- $(head -n 1 /proc/self/uid_map)
echo "map=$1 $2 $3"
echo "uid=$(id -u)"
if cat "$SECRET" >/dev/null 2>&1; then echo "secret=read"; else echo "secret=refused"; fi
echo "wsowner=$(stat -c %u "$WS/existing")"
(echo "reopen=ok" > /dev/stdout) 2>/dev/null || echo "reopen=refused"
if echo appended >> "$WS/existing" && echo made > "$WS/new"; then echo "ws=written"; else echo "ws=refused"; fi
`

// hostFixture makes a root-only secret outside /tmp (the peer's /tmp is
// private) and a root-owned workspace with one root-owned file.
func hostFixture(t *testing.T) (secret, ws string) {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "loki-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret = filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("host root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "existing"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return secret, ws
}

// TestPrivateUserNamespace: as root, the namespace backend's peer is root
// only of a user namespace of its own (the host's ids 1879048192+, or
// root's /etc/subuid block): a root-only host file is out of its reach,
// while its workspace, an idmapped mount, is written with the host's
// owners kept, and its stdio pipes can still be reopened. --userns host is the control case: the same probe then
// reads the secret.
func TestPrivateUserNamespace(t *testing.T) {
	ns := backends()[0]
	for _, tc := range []struct {
		name   string
		flags  []string
		map0   string // the host id inside uid 0 maps to
		secret string
	}{
		{"default", nil, "private", "refused"},
		{"private", []string{"--userns", "private"}, "private", "refused"},
		{"host", []string{"--userns", "host"}, "0", "read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret, ws := hostFixture(t)
			flags := append([]string{"--cwd", ws, "--env", "SECRET=" + secret, "--env", "WS=" + ws}, tc.flags...)
			code, out, stderr := session(t, ns, flags, "sh", "-c", usernsProbe)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			r := results(out)
			f := strings.Fields(r["map"])
			if len(f) != 3 || f[0] != "0" {
				t.Fatalf("uid_map %q (output %q)", r["map"], out)
			}
			if tc.map0 == "private" {
				if f[1] == "0" || f[2] == "4294967295" {
					t.Errorf("uid_map %q: want uid 0 mapped to an unprivileged host uid", r["map"])
				}
			} else if f[1] != tc.map0 {
				t.Errorf("uid_map %q: want 0 -> %s", r["map"], tc.map0)
			}
			// reopen: its stdout, the test's pipe, is reopened through
			// /proc/self/fd (echo >/dev/stdout).
			want := map[string]string{"uid": "0", "secret": tc.secret, "wsowner": "0", "ws": "written", "reopen": "ok"}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("%s=%q, want %q (output %q, stderr %q)", k, r[k], v, out, stderr)
				}
			}
			b, err := os.ReadFile(filepath.Join(ws, "existing"))
			if err != nil || string(b) != "before\nappended\n" {
				t.Errorf("workspace file %q, %v: want the peer's append", b, err)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(ws, "new"), &st); err != nil || st.Uid != 0 || st.Gid != 0 {
				t.Errorf("new workspace file: %v, owner %d:%d: want 0:0 on the host", err, st.Uid, st.Gid)
			}
		})
	}
}

// TestPrivateUserNamespaceRefusals: what a private user namespace cannot
// give is refused with exit 127 (or 2 for flags that contradict each
// other) and one line, and the peer never runs.
func TestPrivateUserNamespaceRefusals(t *testing.T) {
	hidden, err := os.MkdirTemp("/var/tmp", "loki-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(hidden) })
	ws := filepath.Join(hidden, "ws") // its parent stays 0700
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	all := backends()
	for _, tc := range []struct {
		name  string
		b     backend
		flags []string
		code  int
		names string
	}{
		{"unsearchable cwd", all[0], []string{"--cwd", ws}, 127, "--userns host"},
		{"user and private", all[0], []string{"--user", "65534", "--userns", "private"}, 2, "--user"},
		{"bad value", all[0], []string{"--userns", "shared"}, 2, "--userns"},
		{"host without root", all[1], []string{"--userns", "host"}, 127, "--userns host"},
		{"oci", all[2], []string{"--userns", "private"}, 127, "--userns private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := session(t, tc.b, tc.flags, "sh", "-c", "echo ran")
			if code != tc.code || strings.Contains(out, "ran") {
				t.Fatalf("exit %d, stdout %q, stderr %q: want %d and no run", code, out, stderr, tc.code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.names) {
				t.Fatalf("stderr %q: want one line naming %s", stderr, tc.names)
			}
		})
	}
}

// TestDoctorPrivateUserNamespace: as root, doctor tries what the default
// session needs, an idmapped mount of the current dir by a user namespace
// of the private block: it works on the temp dir's filesystem and cannot
// on /proc, where the default session then cannot run (exit 1, a fix).
func TestDoctorPrivateUserNamespace(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct {
		dir string
		ok  bool
	}{{t.TempDir(), true}, {"/proc", false}} {
		cmd := exec.Command(testutil.Binary(t, "loki-supervise"), "doctor", "--json")
		cmd.Dir = tc.dir
		out, err := cmd.Output()
		var r doctorReport
		if jerr := json.Unmarshal(out, &r); jerr != nil {
			t.Fatalf("%s: %v (%v): %q", tc.dir, jerr, err, out)
		}
		if got := r.ok(t, "private user namespace"); got != tc.ok || r.DefaultSession != tc.ok || (testutil.ExitCode(err) == 0) != tc.ok {
			t.Errorf("in %s: private user namespace ok=%v, default_session=%v, exit %d: want %v", tc.dir, got, r.DefaultSession, testutil.ExitCode(err), tc.ok)
		}
	}
}
