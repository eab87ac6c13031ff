//go:build unix && !linux

package session

// OtherControlRoots: only the namespace backend (Linux) covers them.
func OtherControlRoots(own string) []string { return nil }
