//go:build !unix

package state

// lock is unavailable: without it a read-modify-write could lose fields, so
// every write fails closed.
func lock(dir string) (func(), error) { return nil, ErrUnsupported }
