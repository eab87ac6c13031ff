//go:build !linux

package sysmon

import "time"

// Calm does nothing here.
func Calm(time.Duration) {}
