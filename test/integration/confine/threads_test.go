//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// threadProbe prints one line per thread of PID 1 (loki-init) and of the
// peer (this shell): its ids, capability sets, no_new_privs, seccomp mode
// and number of filters, as /proc shows them. A thread may end meanwhile
// (the one that forked the peer does): it is left out. Then whether the
// peer may make a set-uid file, which the session's syscall policy
// refuses.
const threadProbe = `
for t in /proc/1/task/* /proc/$$/task/*; do
	s=$(cat "$t/status" 2>/dev/null) && [ -n "$s" ] || continue # a thread that ended
	printf 'task=%s' "$t"
	echo "$s" | while IFS=: read -r k v; do
		case $k in Uid|Gid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters)
			printf ' %s=%s' "$k" "$(echo $v | tr ' ' ,)";;
		esac
	done
	echo
done
f=/tmp/loki-suid-$$
: >"$f" && chmod 4755 "$f" 2>/dev/null && echo suid=allowed || echo suid=refused
`

// TestEveryThreadUnprivileged: the namespace stage confines loki-init in
// its own process (no exec), so what it gives up must be given up by
// every thread: none of PID 1's threads nor the peer's may keep a
// capability, miss no_new_privs or the seccomp filter, or run as other
// ids, as root with the private user namespace, with --userns host, with
// --user, and from an unprivileged supervisor; on oci and docker, where
// a runtime starts loki-init, the same. Every thread carries the same
// number of filters (the runtime's, then the one loki-init installs with
// TSYNC: a thread with fewer would lack the session's syscall policy),
// and the peer is refused a set-uid mode, which only that policy
// refuses.
func TestEveryThreadUnprivileged(t *testing.T) {
	ns, nsUser, crun, runc := backends.Get("namespace"), backends.Get("namespace-userns"), backends.Get("oci-crun"), backends.Get("oci-runc")
	for _, tc := range []struct {
		name  string
		b     backend
		flags []string
		id    int
	}{
		{"private userns", ns, nil, 0},
		{"userns host", ns, []string{"--userns", "host"}, 0},
		{"user", ns, []string{"--user", "65534:65534"}, testutil.Nobody},
		{"user fs host", ns, []string{"--user", "65534:65534", "--fs", "host"}, testutil.Nobody},
		{"unprivileged supervisor", nsUser, nil, testutil.Nobody},
		{"oci crun", crun, nil, 0},
		{"oci runc", runc, nil, 0},
		{"oci crun user", crun, []string{"--user", "65534:65534"}, testutil.Nobody},
		{"docker", backends.Get("docker"), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := session(t, tc.b, tc.flags, "sh", "-c", threadProbe)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			ids := strings.Repeat(strconv.Itoa(tc.id)+",", 3) + strconv.Itoa(tc.id)
			const none = "0000000000000000"
			want := map[string]string{
				"Uid": ids, "Gid": ids, "CapInh": none, "CapPrm": none, "CapEff": none,
				"CapAmb": none, "NoNewPrivs": "1", "Seccomp": "2",
			}
			// The namespace stage leaves the bounding set alone: under
			// no_new_privs it limits nothing (TestNoCapabilityFromExec).
			if tc.b.Name != ns.Name && tc.b.Name != nsUser.Name {
				want["CapBnd"] = none
			}
			init, peer, filters := 0, 0, map[string]int{}
			for _, line := range strings.Split(out, "\n") {
				fields := strings.Fields(line)
				if len(fields) == 0 || !strings.HasPrefix(fields[0], "task=") {
					continue
				}
				task := strings.TrimPrefix(fields[0], "task=")
				if strings.HasPrefix(task, "/proc/1/") {
					init++
				} else {
					peer++
				}
				got := expectFields(t, task, fields[1:], want)
				filters[got["Seccomp_filters"]]++
			}
			if len(filters) != 1 {
				t.Errorf("threads differ in their number of seccomp filters: %v", filters)
			}
			if !strings.Contains(out, "suid=refused") {
				t.Errorf("the peer made a set-uid file: %q", out)
			}
			// The Go runtime of loki-init runs several threads; one
			// alone would prove nothing about the others.
			if init < 2 || peer < 1 {
				t.Fatalf("saw %d threads of PID 1 and %d of the peer: %q", init, peer, out)
			}
		})
	}
}

// expectFields reads "key=value" fields of one probe line (what) and
// reports every key of want whose value differs; it returns them all.
func expectFields(t *testing.T, what string, fields []string, want map[string]string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			got[k] = v
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s=%q, want %q", what, k, got[k], v)
		}
	}
	return got
}

// privileged makes, in a host dir the peer can read, copies of cat that
// would raise whoever runs them: "suid" set-uid root, "fcap" with file
// capabilities (CAP_DAC_OVERRIDE and CAP_SYS_ADMIN, permitted and effective). It proves they do
// so on the host for nobody, who holds nothing else, so that a session
// in which they raise nothing is not a blind test.
func privileged(t *testing.T) string {
	t.Helper()
	dir := hostDir(t, 0)
	cat, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"suid", "fcap"} {
		if err := os.WriteFile(filepath.Join(dir, name), cat, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "suid"), os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setcap", "cap_dac_override,cap_sys_admin=ep", filepath.Join(dir, "fcap")).CombinedOutput(); err != nil {
		t.Fatalf("setcap: %v: %s", err, out)
	}
	for _, name := range []string{"suid", "fcap"} {
		cmd := exec.Command(filepath.Join(dir, name), "/proc/self/status")
		cmd.SysProcAttr = testutil.AsUser(testutil.Nobody)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s as nobody on the host: %v", name, err)
		}
		if capSet(string(out), "CapEff") == "0000000000000000" {
			t.Fatalf("%s gives nobody nothing on the host: the test would be blind:\n%s", name, out)
		}
	}
	return dir
}

// capSet is the value of field key in a /proc/PID/status text.
func capSet(status, key string) string {
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestNoCapabilityFromExec: the namespace stage keeps the bounding set
// (emptying it took one stop-the-world per capability), so
// no_new_privs with empty permitted, inheritable and ambient sets must
// alone keep an exec from raising the peer: a set-uid-root binary and
// one with every file capability, run by the peer, hold no capability
// and keep the session's ids, with the private user namespace, as the
// host's root (--userns host, where root's own exec would otherwise get
// the whole bounding set), as --user on the host's mounts (which honour
// set-uid bits, checked), and from an unprivileged supervisor.
func TestNoCapabilityFromExec(t *testing.T) {
	testutil.RequireRoot(t)
	ns, nsUser := backends.Get("namespace"), backends.Get("namespace-userns")
	dir := privileged(t)
	probe := `for b in suid fcap; do
	printf '%s' "$b"
	"$1/$b" /proc/self/status | while IFS=: read -r k v; do
		case $k in Uid|Gid|CapInh|CapPrm|CapEff|CapAmb) printf ' %s=%s' "$k" "$(echo $v | tr ' ' ,)";; esac
	done
	echo
done
python3 -c 'import os, sys; print("nosuid=%d" % bool(os.statvfs(sys.argv[1]).f_flag & os.ST_NOSUID))' "$1"`
	for _, tc := range []struct {
		name   string
		b      backend
		flags  []string
		id     int
		suidOK bool // the mount honours set-uid bits
	}{
		{"private userns", ns, nil, 0, false},
		{"userns host", ns, []string{"--userns", "host"}, 0, false},
		{"user fs host", ns, []string{"--user", "65534:65534", "--fs", "host"}, testutil.Nobody, true},
		{"userns host fs host", ns, []string{"--userns", "host", "--fs", "host"}, 0, true},
		{"unprivileged supervisor", nsUser, nil, testutil.Nobody, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := session(t, tc.b, tc.flags, "sh", "-c", probe, "sh", dir)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if tc.suidOK && !strings.Contains(out, "nosuid=0") {
				t.Fatalf("the peer sees %s nosuid: the set-uid case would be blind: %q", dir, out)
			}
			ids := strings.Repeat(strconv.Itoa(tc.id)+",", 3) + strconv.Itoa(tc.id)
			const none = "0000000000000000"
			want := map[string]string{"Uid": ids, "Gid": ids, "CapInh": none, "CapPrm": none, "CapEff": none, "CapAmb": none}
			seen := 0
			for _, line := range strings.Split(out, "\n") {
				fields := strings.Fields(line)
				if len(fields) == 0 || (fields[0] != "suid" && fields[0] != "fcap") {
					continue
				}
				seen++
				expectFields(t, fields[0], fields[1:], want)
			}
			if seen != 2 {
				t.Fatalf("saw %d of the 2 binaries run: %q (stderr %q)", seen, out, stderr)
			}
		})
	}
}
