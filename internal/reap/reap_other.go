//go:build !linux

package reap

// New returns a reaper whose every call reports no children: PID-1 reaping
// is a Linux concern (the init only runs inside a Linux PID namespace).
func New() *Reaper { return &Reaper{w: noWaiter{}, batch: DefaultBatch} }

type noWaiter struct{}

func (noWaiter) wait(int) (int, Status, bool, error) { return 0, Status{}, true, ErrUnsupported }
