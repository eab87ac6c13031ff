//go:build !linux

package session

// watchLeaseReads is unavailable here: start-up renewals follow the timer.
func watchLeaseReads(string) (<-chan struct{}, func()) { return nil, func() {} }
