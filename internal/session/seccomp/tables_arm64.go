//go:build linux && arm64

package seccomp

import "golang.org/x/sys/unix"

// abis: arm64 (no chmod, mknod, creat or open: only their *at forms),
// with 32-bit ARM (EABI) as its compat ABI.
var abis = []abi{
	{arch: unix.AUDIT_ARCH_AARCH64, nrs: map[string]uint32{
		"fchmod": 52, "fchmodat": 53, "fchmodat2": 452,
		"mknodat": 33, "openat": 56, "openat2": 437,
		"setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "setxattrat": 463,
		"add_key": 217, "request_key": 218, "keyctl": 219,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"userfaultfd": 282, "perf_event_open": 241, "bpf": 280,
		"clone3": 435, "socket": 198, "setsockopt": 208,
	}},
	{arch: unix.AUDIT_ARCH_ARM, nrs: map[string]uint32{
		"chmod": 15, "fchmod": 94, "fchmodat": 333, "fchmodat2": 452,
		"mknod": 14, "mknodat": 324, "creat": 8, "open": 5, "openat": 322, "openat2": 437,
		"setxattr": 226, "lsetxattr": 227, "fsetxattr": 228, "setxattrat": 463,
		"add_key": 309, "request_key": 310, "keyctl": 311,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"userfaultfd": 388, "perf_event_open": 364, "bpf": 386,
		"clone3": 435, "socket": 281, "setsockopt": 294,
	}},
}
