package namespace

import (
	"errors"
	"fmt"
	"os"

	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
	"github.com/loki-sh/loki/internal/session/confine"
)

// sessionCgroup makes the session's own cgroup, limits written, before
// its first process exists. Limits the user named are applied or the
// session is refused; the default pids limit alone, on a host that gives
// this user no cgroup, is reported through Warn and skipped. nil when
// there is nothing to apply.
func (b *Backend) sessionCgroup(req session.Request) (*cgroup.Cgroup, error) {
	r := req.Confine.Resources
	if !r.Any() {
		return nil, nil
	}
	host, err := cgroup.Detect()
	var cg *cgroup.Cgroup
	if err == nil {
		host.SweepEmpty()
		cg, err = host.Create(cgroup.Name(req.Scratch), r)
		if err != nil && r.PidsMax == 0 && r.Asked() {
			// The limits asked for may be there without the default
			// pids limit's controller: that one alone is best effort.
			noPids := r
			noPids.PidsMax = confine.Unlimited
			if cg, err = host.Create(cgroup.Name(req.Scratch), noPids); err == nil && b.Warn != nil {
				b.Warn("default pids limit not applied: no pids cgroup controller usable here (see loki-supervise doctor)")
			}
		}
	}
	if err == nil {
		if err = cg.Record(req.Scratch); err != nil {
			cg.Remove()
		}
	}
	switch {
	case err == nil:
		return cg, nil
	case !r.Asked() && errors.Is(err, cgroup.ErrUnavailable):
		if b.Warn != nil {
			b.Warn(fmt.Sprintf("default pids limit not applied: %v (see loki-supervise doctor)", err))
		}
		return nil, nil
	case os.Geteuid() != 0:
		return nil, fmt.Errorf("%v; run as root or in a delegated cgroup (loki-supervise doctor), or drop the limit", err)
	}
	return nil, fmt.Errorf("%v; drop the limit or fix the host's cgroups (loki-supervise doctor)", err)
}
