//go:build linux

package confine

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/testutil"
)

// usernsProbe prints the peer's user-namespace map, whether it can read a
// root-only file of the host ($SECRET, outside every writable path and
// HOME) and write its lease, and, when $WS names one, how it sees its
// writable workspace, and writes there.
const usernsProbe = `
set -- $(head -n 1 /proc/self/uid_map)
echo "map=$1 $2 $3"
echo "uid=$(id -u)"
if cat "$SECRET" >/dev/null 2>&1; then echo "secret=read"; else echo "secret=refused"; fi
c=$(tr "\0" "\n" < /proc/1/cmdline | tail -n 1)
if printf "" >> "$c/lease" 2>/dev/null; then echo "lease=writable"; else echo "lease=refused"; fi
(echo "reopen=ok" > /dev/stdout) 2>/dev/null || echo "reopen=refused"
[ -n "$WS" ] || exit 0
echo "wsowner=$(stat -c %u "$WS/existing")"
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

// TestPrivateUserNamespace: as root, the peer of the namespace backend
// and of oci (crun, runc) is root only of a user namespace of its own
// (the host's ids 1879048192+, or root's /etc/subuid block): a root-only
// host file is out of its reach (on oci, bound read-only into the
// container), it cannot write its lease, while its workspace (the
// namespace backend's cwd, oci's --write), an idmapped mount, is written
// with the host's owners kept, and its stdio pipes can still be reopened.
// runc 1.1 cannot idmap a mount, so there the workspace is refused
// (TestPrivateUserNamespaceRefusals) and checked only with --userns host.
// --userns host is the control case: the same probe then reads the secret.
func TestPrivateUserNamespace(t *testing.T) {
	all := rows()
	for _, b := range []backend{all[0], all[2], all[3]} {
		for _, tc := range []struct {
			name    string
			flags   []string
			private bool
		}{
			{"default", nil, true},
			{"private", []string{"--userns", "private"}, true},
			{"host", []string{"--userns", "host"}, false},
		} {
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				secret, ws := hostFixture(t)
				oci := strings.HasPrefix(b.Name, "oci")
				withWS := !(b.Name == "oci-runc" && tc.private)
				flags := append([]string{}, tc.flags...)
				if oci {
					// The secret's dir, read-only at /host; the
					// workspace writable at its own path.
					flags = append(flags, "--bind", filepath.Dir(secret)+":/host:ro", "--env", "SECRET=/host/secret")
					if withWS {
						flags = append(flags, "--write", ws)
					}
				} else {
					flags = append(flags, "--cwd", ws, "--env", "SECRET="+secret)
				}
				if withWS {
					flags = append(flags, "--env", "WS="+ws)
				}
				code, out, stderr := session(t, b, flags, "sh", "-c", usernsProbe)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				f := strings.Fields(r["map"])
				if len(f) != 3 || f[0] != "0" {
					t.Fatalf("uid_map %q (output %q)", r["map"], out)
				}
				if tc.private && (f[1] == "0" || f[2] == "4294967295") {
					t.Errorf("uid_map %q: want uid 0 mapped to an unprivileged host uid", r["map"])
				}
				if !tc.private && (f[1] != "0" || f[2] != "4294967295") {
					t.Errorf("uid_map %q: want the identity map", r["map"])
				}
				secretWant := "refused"
				if !tc.private {
					secretWant = "read"
				}
				want := map[string]string{"uid": "0", "secret": secretWant, "lease": "refused", "reopen": "ok"}
				if withWS {
					want["wsowner"], want["ws"] = "0", "written"
				}
				for k, v := range want {
					if r[k] != v {
						t.Errorf("%s=%q, want %q (output %q, stderr %q)", k, r[k], v, out, stderr)
					}
				}
				if !withWS {
					return
				}
				data, err := os.ReadFile(filepath.Join(ws, "existing"))
				if err != nil || string(data) != "before\nappended\n" {
					t.Errorf("workspace file %q, %v: want the peer's append", data, err)
				}
				var st syscall.Stat_t
				if err := syscall.Stat(filepath.Join(ws, "new"), &st); err != nil || st.Uid != 0 || st.Gid != 0 {
					t.Errorf("new workspace file: %v, owner %d:%d: want 0:0 on the host", err, st.Uid, st.Gid)
				}
			})
		}
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
	// Root's 0700 dir above a cwd is shown to the peer (idmapped, read-only);
	// another user's is closed to it, as to root without capabilities.
	alices := ownedDir(t, filepath.Join(hidden, "alice"), testutil.Nobody, 0o700)
	alicesWS := ownedDir(t, filepath.Join(alices, "ws"), 0, 0o755)
	all := rows()
	for _, tc := range []struct {
		name  string
		b     backend
		flags []string
		code  int
		names string
	}{
		{"unsearchable cwd", all[0], []string{"--cwd", alicesWS}, 127, alices + " is another user's"},
		{"user and private", all[0], []string{"--user", "65534", "--userns", "private"}, 2, "--user"},
		{"bad value", all[0], []string{"--userns", "shared"}, 2, "--userns"},
		{"host without root", all[1], []string{"--userns", "host"}, 127, "--userns host"},
		// runc 1.1 cannot idmap a mount: a writable bind would be one
		// the peer cannot write.
		{"runc write", all[3], []string{"--write", ws}, 127, "--userns host"},
		{"runc rw bind", all[3], []string{"--bind", ws + ":/ws"}, 127, "--userns host"},
		// The rootfs is host root's: its root could not write it.
		{"crun writable rootfs", all[2], []string{"--writable-rootfs"}, 127, "--userns host"},
		{"runc writable rootfs", all[3], []string{"--writable-rootfs"}, 127, "--userns host"},
		{"oci user and private", all[2], []string{"--user", "65534", "--userns", "private"}, 2, "--user"},
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

// TestOCISpecPrivateUserNamespace: as root oci-spec prints the config
// session runs: a user namespace with the private block's mappings, the
// writable bind idmapped, the read-only one not; --userns host and --user
// print none; with --runtime runc a writable bind is refused as session
// refuses it (127, one line).
func TestOCISpecPrivateUserNamespace(t *testing.T) {
	testutil.RequireRoot(t)
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	root := t.TempDir()
	// The rootfs must be reachable by the namespace's root ("others"):
	// the test's own temp dirs, never the host's /tmp above them.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rootfs, ctl, wr, ro := filepath.Join(root, "rootfs"), filepath.Join(root, "ctl"), filepath.Join(root, "w"), filepath.Join(root, "r")
	for _, d := range []string{rootfs, ctl, wr, ro} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(args ...string) (specs.Spec, int, string) {
		t.Helper()
		cmd := exec.Command(sup, append([]string{"oci-spec", "--init", init, "--rootfs", rootfs, "--control-dir", ctl,
			"--write", wr, "--bind", ro + ":/r:ro"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var s specs.Spec
		if err == nil {
			if jerr := json.Unmarshal(out, &s); jerr != nil {
				t.Fatalf("not a config: %v", jerr)
			}
		}
		return s, testutil.ExitCode(err), stderr.String()
	}
	userns := func(s specs.Spec) bool {
		for _, n := range s.Linux.Namespaces {
			if n.Type == specs.UserNamespace {
				return true
			}
		}
		return false
	}
	s, code, stderr := spec()
	if code != 0 {
		t.Fatalf("default: exit %d, %q", code, stderr)
	}
	if !userns(s) || len(s.Linux.UIDMappings) != 1 || s.Linux.UIDMappings[0].HostID == 0 || s.Linux.UIDMappings[0].ContainerID != 0 ||
		len(s.Linux.GIDMappings) != 1 || s.Linux.GIDMappings[0].HostID == 0 {
		t.Errorf("default: namespaces %+v, uid %+v, gid %+v: want a user namespace mapping 0 to an unprivileged id", s.Linux.Namespaces, s.Linux.UIDMappings, s.Linux.GIDMappings)
	}
	for _, m := range s.Mounts {
		idmapped := contains(m.Options, "idmap")
		if (m.Destination == wr) != idmapped {
			t.Errorf("mount %s: idmap %v (options %v): only the writable bind is idmapped", m.Destination, idmapped, m.Options)
		}
	}
	for _, flags := range [][]string{{"--userns", "host"}, {"--user", "65534"}} {
		if s, code, stderr := spec(flags...); code != 0 || userns(s) || len(s.Linux.UIDMappings) != 0 {
			t.Errorf("%v: exit %d (%q), user namespace %v", flags, code, stderr, userns(s))
		}
	}
	testutil.RequireCommand(t, "runc")
	if _, code, stderr := spec("--runtime", "runc"); code != 127 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--userns host") {
		t.Errorf("--runtime runc: exit %d, stderr %q: want 127 and one line naming --userns host", code, stderr)
	}
	if _, code, stderr := spec("--runtime", "runc", "--userns", "host"); code != 0 {
		t.Errorf("--runtime runc --userns host: exit %d, stderr %q", code, stderr)
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
