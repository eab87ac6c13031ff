//go:build unix && !linux

package lineage

import "time"

// cgroup containment exists only on Linux; elsewhere newCgroup returns nil
// and these are never reached.
type cgroup struct {
	dir string
	dfd int
}

func newCgroup(string) *cgroup                 { return nil }
func (c *cgroup) pids() ([]int, error)         { return nil, ErrUnsupported }
func (c *cgroup) populated() bool              { return false }
func (c *cgroup) kill(time.Duration) bool      { return false }
func (c *cgroup) waitEmpty(time.Duration) bool { return true }
func (c *cgroup) remove()                      {}
func (c *cgroup) closeFD()                     {}
func reclaimCgroup(string)                     {}

const cgroupPrefix = "loki-lineage-"
