//go:build linux

package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probe is a python3 program run as the confined runner: one line per
// attack of issue 38 items 5 to 8, "name=ok" when the attack worked and
// "name=refused:<errno name>" when the kernel said no.
const probe = `
import ctypes, errno, os, socket, sys
host, fdfile = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def report(name, f):
    try:
        f()
        print(name + "=ok")
    except OSError as e:
        print(name + "=refused:" + errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()
def caps():
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") and int(v, 16) != 0:
            return
    raise OSError(errno.EPERM, "no capabilities")
report("caps-held", caps)
report("chown-host", lambda: os.chown(host, 65534, 65534))
def setcap():
    open("py", "wb").close()
    os.setxattr("py", "security.capability", bytes.fromhex("0100000200000000000000000000000000000000"))
report("setxattr-capability", setcap)
report("raw-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
report("mptcp-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).close())
def port_range():
    s = socket.socket()
    s.setsockopt(socket.SOL_IP, 51, (8080 << 16) | 8080)
    s.close()
report("ip-local-port-range", port_range)
def clone3():
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(435), None, ctypes.c_size_t(0)) == -1:
        raise OSError(ctypes.get_errno(), "clone3")
report("clone3", clone3)
def io_uring():
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(ctypes.c_long(425), ctypes.c_uint(1), params)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    os.close(fd)
report("io-uring", io_uring)
def environ():
    if b"hostile-secret-38" not in open("/proc/%d/environ" % os.getppid(), "rb").read():
        raise OSError(errno.ENOENT, "no secret")
report("parent-environ", environ)
def parent_fds():
    # The numbers may be listed (the dir is root's, and so is the runner);
    # what they name must not be readable.
    for n in os.listdir("/proc/%d/fd" % os.getppid()):
        os.readlink("/proc/%d/fd/%s" % (os.getppid(), n))
report("parent-fds", parent_fds)
report("inherited-fd", lambda: os.write(7, b"pwned\n"))
print("done")
`

// TestConfinedRunnerHasNoPrivilege: a root runner under the Linux
// boundary attacks what Landlock does not cover. Every attack must be
// refused (before, on main: capabilities all held, chown of a host file,
// security.capability set, raw and MPTCP sockets, IP_LOCAL_PORT_RANGE,
// clone3 (EINVAL, so CLONE_INTO_CGROUP reachable), io_uring, the
// supervisor's environment and fds readable, and an fd the supervisor's
// caller left open writable).
func TestConfinedRunnerHasNoPrivilege(t *testing.T) {
	requireLandlock(t)
	b := newBox(t)
	script := filepath.Join(b.out, "probe.py")
	if err := os.WriteFile(script, []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	fdFile := filepath.Join(b.root, "fd7.txt")
	b.files = inheritedFD7(t, fdFile)
	b.extra = []string{"LOKI_TEST_SECRET=hostile-secret-38"}
	r := b.start(true, "exec python3 "+script+" "+b.hostFile+" "+fdFile)
	if code, ok := r.exit(wait); !ok || code != 0 {
		t.Fatalf("exit %d; stderr %q; log %q", code, r.stderr.String(), r.log())
	}
	got := map[string]string{}
	for _, line := range strings.Split(r.log(), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	if !strings.Contains(r.log(), "done") {
		t.Fatalf("probe did not finish: %q", r.log())
	}
	for _, name := range []string{"caps-held", "chown-host", "setxattr-capability", "raw-socket", "mptcp-socket",
		"ip-local-port-range", "clone3", "io-uring", "parent-environ", "parent-fds", "inherited-fd"} {
		if !strings.HasPrefix(got[name], "refused:") {
			t.Errorf("%s: %q, want refused", name, got[name])
		}
	}
	for name, want := range map[string]string{"clone3": "ENOSYS", "mptcp-socket": "EPROTONOSUPPORT", "ip-local-port-range": "ENOPROTOOPT", "inherited-fd": "EBADF"} {
		if got[name] != "refused:"+want {
			t.Errorf("%s: %q, want refused:%s", name, got[name], want)
		}
	}
	if fi, err := os.Stat(b.hostFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("host file: %v %v", fi.Mode(), err)
	}
	if c, _ := os.ReadFile(fdFile); len(c) != 0 {
		t.Errorf("the runner wrote %q through an inherited fd", c)
	}
}

// TestUnconfinedRunnerInheritsNoFD: the caller's open descriptors never
// reach a runner, confined or not (before: fd 7 was the runner's).
func TestUnconfinedRunnerInheritsNoFD(t *testing.T) {
	b := newBox(t)
	fdFile := filepath.Join(b.root, "fd7.txt")
	b.files = inheritedFD7(t, fdFile)
	r := b.start(false, "if echo pwned >&7; then echo fd7=open; else echo fd7=closed; fi")
	if code, ok := r.exit(wait); !ok || code != 0 {
		t.Fatalf("exit %d; stderr %q", code, r.stderr.String())
	}
	if !strings.Contains(r.log(), "fd7=closed") {
		t.Errorf("log %q", r.log())
	}
	if c, _ := os.ReadFile(fdFile); len(c) != 0 {
		t.Errorf("the runner wrote %q through an inherited fd", c)
	}
}

// inheritedFD7 opens path for append as the supervisor's fd 7 (3 to 6
// are /dev/null), as a caller's `7>>path` leaves it.
func inheritedFD7(t *testing.T, path string) []*os.File {
	t.Helper()
	var files []*os.File
	for i := 0; i < 4; i++ {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, f)
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	return files
}
