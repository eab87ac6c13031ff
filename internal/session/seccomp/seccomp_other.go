//go:build !linux

package seccomp

// Install is unavailable off Linux.
func Install() error { return ErrUnsupported }
