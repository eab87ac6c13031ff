package harden

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Values the kernel headers name that x/sys does not export everywhere.
const (
	ipprotoMPTCP      = 262 // IPPROTO_MPTCP
	ipLocalPortRange  = 51  // IP_LOCAL_PORT_RANGE (Linux 6.3)
	x32SyscallBit     = 0x40000000
	seccompDataNR     = 0
	seccompDataArch   = 4
	seccompDataArgLow = 16 // args[i] at 16 + 8*i; the low word first (little endian)
)

// DropCapabilities empties every capability set of the calling thread
// (the bounding set first, while CAP_SETPCAP is still held) and checks
// that none is left. A bounding set that cannot be dropped (a non-root
// caller has no CAP_SETPCAP) is harmless under no_new_privs with empty
// permitted and inheritable sets: exec then gives nothing back, not even
// to uid 0. Anything left in the permitted set is an error.
func DropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("harden: no_new_privs: %w", err)
	}
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("harden: drop bounding capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("harden: clear capabilities: %w", err)
	}
	var now [2]unix.CapUserData
	if err := unix.Capget(&hdr, &now[0]); err != nil {
		return fmt.Errorf("harden: read capabilities: %w", err)
	}
	for _, d := range now {
		if d.Permitted != 0 || d.Effective != 0 || d.Inheritable != 0 {
			return errors.New("harden: capabilities left after dropping them")
		}
	}
	return nil
}

// nativeArch is the AUDIT_ARCH of this build's system call ABI.
func nativeArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("harden: no seccomp filter for %s: %w", runtime.GOARCH, unix.ENOSYS)
}

// Filter is the seccomp program InstallFilter loads, for review and tests.
func Filter() ([]unix.SockFilter, error) {
	arch, err := nativeArch()
	if err != nil {
		return nil, err
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	errno := func(e unix.Errno) unix.SockFilter { return ret(unix.SECCOMP_RET_ERRNO | uint32(e)) }
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	// jeq jumps over skip instructions when A != k, else falls through.
	jne := func(k uint32, skip uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: 0, Jf: skip}
	}
	p := []unix.SockFilter{
		ld(seccompDataArch),
		jne(arch, 1), // a foreign ABI: refused whole
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: 1},
		errno(unix.ENOSYS),
		ld(seccompDataNR),
	}
	if runtime.GOARCH == "amd64" {
		p = append(p,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: x32SyscallBit, Jt: 0, Jf: 1},
			errno(unix.ENOSYS))
	}
	for _, nr := range []uint32{unix.SYS_CLONE3, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p = append(p, jne(nr, 1), errno(unix.ENOSYS))
	}
	p = append(p,
		// socket(domain, type, IPPROTO_MPTCP): as on a kernel without
		// MPTCP, so a program falls back to TCP.
		jne(unix.SYS_SOCKET, 3),
		ld(seccompDataArgLow+2*8),
		jne(ipprotoMPTCP, 1),
		errno(unix.EPROTONOSUPPORT),
		ld(seccompDataNR),
		// setsockopt(fd, SOL_IP, IP_LOCAL_PORT_RANGE, ...): as on a
		// kernel before 6.3.
		jne(unix.SYS_SETSOCKOPT, 5),
		ld(seccompDataArgLow+1*8),
		jne(unix.SOL_IP, 3),
		ld(seccompDataArgLow+2*8),
		jne(ipLocalPortRange, 1),
		errno(unix.ENOPROTOOPT),
		ret(unix.SECCOMP_RET_ALLOW),
	)
	return p, nil
}

// InstallFilter loads Filter on the calling thread (no_new_privs must be
// set, as DropCapabilities and Landlock leave it).
func InstallFilter() error {
	p, err := Filter()
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("harden: seccomp filter: %w", err)
	}
	runtime.KeepAlive(p)
	return nil
}

// HideSelf makes the calling process non-dumpable: its /proc/PID/environ,
// fd, maps and mem then need CAP_SYS_PTRACE, so a same-uid runner without
// it (every confined runner) cannot read the supervisor's secrets.
func HideSelf() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// CloseOnExecFrom marks every descriptor from fd up close-on-exec, so a
// descriptor the caller left open never reaches the exec'd program
// (close_range with CLOSE_RANGE_CLOEXEC, Linux 5.11; else one by one).
func CloseOnExecFrom(fd int) error {
	if err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	return closeOnExecListed(fd)
}
