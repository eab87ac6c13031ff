//go:build !linux

package cgroup

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/loki-sh/loki/internal/session/confine"
)

// Detect: cgroups are Linux's.
func Detect() (Host, error) { return Host{}, fmt.Errorf("%w: cgroups need Linux", ErrUnavailable) }

// CleanStale has nothing to clean off Linux.
func CleanStale(string) {}

// Cgroup is Linux's; off Linux there is none.
type Cgroup struct{}

// ForSession refuses a limit asked for off Linux; the default one is skipped.
func ForSession(_ string, r confine.Resources, _ func(string)) (*Cgroup, error) {
	if r.Asked() {
		return nil, fmt.Errorf("%w: cgroups need Linux", ErrUnavailable)
	}
	return nil, nil
}

// Start starts cmd: there is no cgroup to start it in.
func (*Cgroup) Start(cmd *exec.Cmd) error { return cmd.Start() }

func (*Cgroup) Placement() (string, []string)    { return "", nil }
func (*Cgroup) Adopt(int, string) error          { return nil }
func (*Cgroup) UnifiedPath() (string, bool)      { return "", false }
func (*Cgroup) Hit() error                       { return nil }
func (*Cgroup) OpenPeerTasks() (*os.File, error) { return nil, nil }
func (*Cgroup) Remove() error                    { return nil }
