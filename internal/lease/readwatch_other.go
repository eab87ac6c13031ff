//go:build !linux

package lease

// WatchReads is unavailable here: start-up renewals follow the timer.
func WatchReads(string) (<-chan struct{}, func()) { return nil, func() {} }
