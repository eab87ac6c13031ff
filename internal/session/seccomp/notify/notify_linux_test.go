//go:build linux

package notify

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/seccomp"
)

// targetEnv makes the test binary the target: it installs the policy
// with a listener, sends it over fd 3, then makes the denied call
// keyctl as often as its stdin's lines say, printing each errno.
const targetEnv = "LOKI_NOTIFY_TEST_TARGET"

func TestMain(m *testing.M) {
	if os.Getenv(targetEnv) != "" {
		target()
		return
	}
	os.Exit(m.Run())
}

func target() {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	fd, err := seccomp.InstallNotified()
	if err != nil {
		panic(err)
	}
	if err := seccomp.SendListener(3, fd, ""); err != nil {
		panic(err)
	}
	unix.Close(fd)
	unix.Close(3)
	// A second listener is refused while one is above (a peer's own).
	if _, err := seccomp.InstallNotified(); !errors.Is(err, unix.EBUSY) {
		fmt.Printf("second listener: %v\n", err)
	}
	var n int
	for {
		if _, err := fmt.Fscan(os.Stdin, &n); err != nil {
			return
		}
		errs := map[string]int{}
		for range n {
			_, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0)
			errs[unix.ErrnoName(e)]++
		}
		// An allowed call still runs.
		_, _, e := unix.Syscall(unix.SYS_GETPID, 0, 0, 0)
		fmt.Printf("%v getpid=%d\n", errs, e)
	}
}

type calls struct {
	mu   sync.Mutex
	seen []Refusal
	n    int
}

func (c *calls) report(r Refusal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) < 8 {
		c.seen = append(c.seen, r)
	}
	c.n++
}

// TestAnswersWithTheRulesErrno: every notified keyctl gets EPERM, as the
// plain filter answers; the first is reported with the caller's pid and
// command name, and every one is counted. Once the notifier is closed,
// the kernel answers ENOSYS: still refused. A second listener under the
// first is refused (EBUSY).
func TestAnswersWithTheRulesErrno(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	here, there := os.NewFile(uintptr(fds[0]), "here"), os.NewFile(uintptr(fds[1]), "there")
	defer here.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), targetEnv+"=1")
	cmd.ExtraFiles = []*os.File{there}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	there.Close()
	defer cmd.Wait()
	defer in.Close()
	fd, why, err := seccomp.ReceiveListener(int(here.Fd()))
	if err != nil || fd < 0 {
		t.Fatalf("no listener: %v %q", err, why)
	}
	c := &calls{}
	n := Serve(fd, c.report)
	line := func(calls int) string {
		fmt.Fprintln(in, calls)
		var b [256]byte
		k, _ := out.Read(b[:])
		return strings.TrimSpace(string(b[:k]))
	}
	const calls = 20000
	if got := line(calls); got != fmt.Sprintf("map[EPERM:%d] getpid=0", calls) {
		t.Fatalf("the target saw %q", got)
	}
	n.Close()
	c.mu.Lock()
	if c.n != calls || len(c.seen) == 0 || c.seen[0] != (Refusal{Syscall: "keyctl", PID: cmd.Process.Pid, Comm: comm(cmd.Process.Pid)}) || c.seen[1] != (Refusal{Syscall: "keyctl"}) {
		t.Errorf("reported %d calls, first %+v; want %d, keyctl by %d", c.n, c.seen, calls, cmd.Process.Pid)
	}
	c.mu.Unlock()
	if got := line(3); got != "map[ENOSYS:3] getpid=0" {
		t.Fatalf("with the notifier closed the target saw %q, want ENOSYS", got)
	}
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}
