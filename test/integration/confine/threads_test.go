//go:build linux

package confine

import (
	"strconv"
	"strings"
	"testing"
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
	ns, nsUser, crun, runc := backends()[0], backends()[1], backends()[2], backends()[3]
	for _, tc := range []struct {
		name  string
		b     backend
		flags []string
		id    int
	}{
		{"private userns", ns, nil, 0},
		{"userns host", ns, []string{"--userns", "host"}, 0},
		{"user", ns, []string{"--user", "65534:65534"}, nobody},
		{"user fs host", ns, []string{"--user", "65534:65534", "--fs", "host"}, nobody},
		{"unprivileged supervisor", nsUser, nil, nobody},
		{"oci crun", crun, nil, 0},
		{"oci runc", runc, nil, 0},
		{"oci crun user", crun, []string{"--user", "65534:65534"}, nobody},
		{"docker", dockerBackend(), nil, 0},
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
				"CapBnd": none, "CapAmb": none, "NoNewPrivs": "1", "Seccomp": "2",
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
				got := map[string]string{}
				for _, f := range fields[1:] {
					if k, v, ok := strings.Cut(f, "="); ok {
						got[k] = v
					}
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %s=%q, want %q", task, k, got[k], v)
					}
				}
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
