//go:build !linux

package session

import "os"

// AwaitExit returns at once: Wait blocks as it always did.
func AwaitExit(*os.Process) {}
