//go:build !unix

package none

import "github.com/loki-sh/loki/internal/session"

// Start is refused where lineage tracking does not exist.
func (Backend) Start(session.Request) (session.Process, error) { return nil, ErrUnsupported }
