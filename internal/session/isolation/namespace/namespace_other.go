//go:build !linux

package namespace

import (
	"github.com/loki-sh/loki/internal/session"
)

// Start is unsupported outside Linux.
func (b *Backend) Start(session.Request) (session.Process, error) { return nil, ErrUnsupported }
