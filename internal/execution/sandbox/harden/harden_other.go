//go:build unix && !linux

package harden

import "errors"

// ErrUnsupported: the capability and seccomp hardening is Linux's.
var ErrUnsupported = errors.New("harden: only on Linux")

// DropCapabilities is unavailable off Linux.
func DropCapabilities() error { return ErrUnsupported }

// InstallFilter is unavailable off Linux.
func InstallFilter() error { return ErrUnsupported }

// HideSelf has no equivalent wired here off Linux (macOS's
// PT_DENY_ATTACH is not the same guarantee); it does nothing.
func HideSelf() error { return nil }

// CloseOnExecFrom marks every descriptor from fd up close-on-exec.
func CloseOnExecFrom(fd int) error { return closeOnExecListed(fd) }
