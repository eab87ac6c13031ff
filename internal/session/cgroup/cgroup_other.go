//go:build !linux

package cgroup

import "fmt"

// Detect: cgroups are Linux's.
func Detect() (Host, error) { return Host{}, fmt.Errorf("%w: cgroups need Linux", ErrUnavailable) }

// CleanStale has nothing to clean off Linux.
func CleanStale(string) {}
