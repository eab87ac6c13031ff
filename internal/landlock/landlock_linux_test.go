//go:build linux

package landlock

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestScopeAbstractUnix restricts a throwaway locked thread (the goroutine
// never unlocks, so the thread dies with it) and checks that it, and not
// the rest of the process, is confined. Below ABI 6 the scope is refused
// with ErrUnavailable instead, and nothing is enforced.
func TestScopeAbstractUnix(t *testing.T) {
	if ABI() < 6 {
		if err := ScopeAbstractUnix(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("ScopeAbstractUnix on ABI %d: %v, want ErrUnavailable", ABI(), err)
		}
		return
	}
	ln, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ln)
	addr := &unix.SockaddrUnix{Name: "@loki-landlock-test"}
	if err := unix.Bind(ln, addr); err != nil {
		t.Fatal(err)
	}
	unix.Listen(ln, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		if err := ScopeAbstractUnix(); err != nil {
			done <- err
			return
		}
		c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(c)
		if err := unix.Connect(c, addr); !errors.Is(err, unix.EPERM) {
			done <- fmt.Errorf("confined thread: connect to a host abstract socket: %v, want EPERM", err)
			return
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(c)
	if err := unix.Connect(c, addr); err != nil {
		t.Fatalf("the test's other threads were confined too: %v", err)
	}
}

// TestConstantsAreTheKernels: the OS-neutral rights are x/sys's.
func TestConstantsAreTheKernels(t *testing.T) {
	for _, c := range [][2]uint64{
		{FSExecute, unix.LANDLOCK_ACCESS_FS_EXECUTE}, {FSMakeSym, unix.LANDLOCK_ACCESS_FS_MAKE_SYM},
		{FSRefer, unix.LANDLOCK_ACCESS_FS_REFER}, {FSTruncate, unix.LANDLOCK_ACCESS_FS_TRUNCATE},
		{FSIoctlDev, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV}, {FSMakeBlock, unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK},
		{NetBindTCP, unix.LANDLOCK_ACCESS_NET_BIND_TCP}, {NetConnectTCP, unix.LANDLOCK_ACCESS_NET_CONNECT_TCP},
		{ScopeAbstractUnixSocket, unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}, {ScopeSignal, unix.LANDLOCK_SCOPE_SIGNAL},
	} {
		if c[0] != c[1] {
			t.Errorf("%#x != kernel %#x", c[0], c[1])
		}
	}
}
