//go:build linux

package landlock

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noLandlockEnv makes this test binary a launcher: it installs a seccomp
// filter under which landlock_create_ruleset fails with EOPNOTSUPP (what
// a kernel with Landlock disabled at boot answers) and execs its
// arguments. The product has no switch for this: its kernel says no.
const noLandlockEnv = "LOKI_TEST_EXEC_WITHOUT_LANDLOCK"

func TestMain(m *testing.M) {
	if os.Getenv(noLandlockEnv) == "1" {
		runtime.LockOSThread() // the filter binds this thread, which execs
		if err := execWithoutLandlock(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "launcher:", err)
			os.Exit(99)
		}
	}
	os.Exit(m.Run())
}

func execWithoutLandlock(argv []string) error {
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_LANDLOCK_CREATE_RULESET},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if kv != noLandlockEnv+"=1" {
			env = append(env, kv)
		}
	}
	return unix.Exec(argv[0], argv, env)
}
