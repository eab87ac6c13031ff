//go:build linux && !amd64

package seccomp

import "golang.org/x/sys/unix"

// precompiled: none for this architecture; Install compiles Policy.
var precompiled [2][]unix.SockFilter
