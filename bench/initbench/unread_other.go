//go:build !linux

package main

import "errors"

// unread is unknown here (the bench needs Linux PID namespaces anyway).
func unread(int) (int, error) { return 0, errors.ErrUnsupported }
