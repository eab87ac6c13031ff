package cgroup

import (
	"errors"
	"fmt"
	"os"

	"github.com/loki-sh/loki/internal/session/confine"
)

// ForSession makes the cgroup of the session whose scratch dir is scratch,
// limits written, before its first process exists, and records it there
// for CleanStale. Limits the user named are applied or refused with the
// fix; the default pids limit alone, on a host that gives this user no
// cgroup, is reported through warn (when not nil) and skipped. nil when
// there is nothing to apply.
func ForSession(scratch string, r confine.Resources, warn func(string)) (*Cgroup, error) {
	if !r.Any() {
		return nil, nil
	}
	host, err := Detect()
	var cg *Cgroup
	if err == nil {
		host.SweepEmpty()
		cg, err = host.Create(Name(scratch), r)
		if err != nil && r.PidsMax == 0 && r.Asked() {
			// The limits asked for may be there without the default
			// pids limit's controller: that one alone is best effort.
			noPids := r
			noPids.PidsMax = confine.Unlimited
			if cg, err = host.Create(Name(scratch), noPids); err == nil && warn != nil {
				warn("default pids limit not applied: no pids cgroup controller usable here (see loki-supervise doctor)")
			}
		}
	}
	if err == nil {
		if err = cg.Record(scratch); err != nil {
			cg.Remove()
		}
	}
	switch {
	case err == nil:
		return cg, nil
	case !r.Asked() && errors.Is(err, ErrUnavailable):
		if warn != nil {
			warn(fmt.Sprintf("default pids limit not applied: %v (see loki-supervise doctor)", err))
		}
		return nil, nil
	case os.Geteuid() != 0:
		return nil, fmt.Errorf("%v; run as root or in a delegated cgroup (loki-supervise doctor), or drop the limit", err)
	}
	return nil, fmt.Errorf("%v; drop the limit or fix the host's cgroups (loki-supervise doctor)", err)
}
