//go:build !linux

package namespace

import (
	"github.com/loki-sh/loki/internal/session"
)

// Start is unsupported outside Linux.
func (b *Backend) Start(session.Request) (session.Process, error) { return nil, ErrUnsupported }

// Capabilities: none outside Linux (Start fails).
func (b *Backend) Capabilities() session.Capabilities { return session.Capabilities{Init: true} }
