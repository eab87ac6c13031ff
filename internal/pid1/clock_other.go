//go:build !linux

package pid1

import "time"

func newCheckClock(d time.Duration) checkClock { return runtimeClock{time.NewTimer(d)} }
