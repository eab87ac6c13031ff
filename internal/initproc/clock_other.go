//go:build !linux

package initproc

import "time"

func newCheckClock(d time.Duration) checkClock { return runtimeClock{time.NewTimer(d)} }
