package namespace

import (
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/cgroup"
)

// sessionCgroup makes the session's own cgroup, limits written, before
// its first process exists (cgroup.ForSession).
func (b *Backend) sessionCgroup(req session.Request) (*cgroup.Cgroup, error) {
	return cgroup.ForSession(req.Scratch, req.Confine.Resources, b.Warn)
}
