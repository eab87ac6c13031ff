//go:build linux && amd64

package stage

import "golang.org/x/sys/unix"

// keyringSyscalls: add_key, request_key, keyctl on x86-64, on i386 (its
// compat ABI), and whether x32 exists to be refused.
func keyringSyscalls() (native, compat syscallSet, x32 bool) {
	return syscallSet{unix.AUDIT_ARCH_X86_64, []uint32{unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL}},
		syscallSet{unix.AUDIT_ARCH_I386, []uint32{286, 287, 288}}, true
}
