//go:build !linux

package seccomp

// Install is unavailable off Linux.
func Install() error { return ErrUnsupported }

// InstallRules is unavailable off Linux.
func InstallRules([]Rule) error { return ErrUnsupported }

// InstallNotified is unavailable off Linux.
func InstallNotified() (int, error) { return -1, ErrUnsupported }
