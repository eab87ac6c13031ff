//go:build linux

package faults

import (
	"fmt"
	"os"
)

// runHelper runs this test binary in a helper role (it was re-executed,
// e.g. as PID 1 of a fresh PID namespace) and returns its exit code.
func runHelper(role string) int {
	switch role {
	case "pidreuse":
		return pidReuseHelper(false)
	case "pidreuse-tick":
		return pidReuseHelper(true)
	}
	fmt.Fprintf(os.Stderr, "unknown helper role %q\n", role)
	return 2
}
