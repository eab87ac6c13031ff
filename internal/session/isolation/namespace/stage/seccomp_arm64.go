//go:build linux && arm64

package stage

import "golang.org/x/sys/unix"

// keyringSyscalls: add_key, request_key, keyctl on arm64 and on 32-bit
// ARM (its compat ABI).
func keyringSyscalls() (native, compat syscallSet, x32 bool) {
	return syscallSet{unix.AUDIT_ARCH_AARCH64, []uint32{unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL}},
		syscallSet{unix.AUDIT_ARCH_ARM, []uint32{309, 310, 311}}, false
}
