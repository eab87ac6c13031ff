//go:build linux && amd64

package seccomp

import "golang.org/x/sys/unix"

// abis: x86-64, with i386 as its compat ABI; x32 (x86-64's audit arch,
// numbers from 0x40000000) is refused whole.
var abis = []abi{
	{arch: unix.AUDIT_ARCH_X86_64, x32: true, nrs: map[string]uint32{
		"chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
		"mknod": 133, "mknodat": 259, "creat": 85, "open": 2, "openat": 257, "openat2": 437,
		"setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463,
		"add_key": 248, "request_key": 249, "keyctl": 250,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"userfaultfd": 323, "perf_event_open": 298, "bpf": 321,
		"clone3": 435, "socket": 41, "setsockopt": 54,
	}},
	{arch: unix.AUDIT_ARCH_I386, nrs: map[string]uint32{
		"chmod": 15, "fchmod": 94, "fchmodat": 306, "fchmodat2": 452,
		"mknod": 14, "mknodat": 297, "creat": 8, "open": 5, "openat": 295, "openat2": 437,
		"setxattr": 226, "lsetxattr": 227, "fsetxattr": 228, "setxattrat": 463,
		"add_key": 286, "request_key": 287, "keyctl": 288,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"userfaultfd": 374, "perf_event_open": 336, "bpf": 357,
		"clone3": 435, "socket": 359, "setsockopt": 366, "socketcall": 102,
	}},
}
