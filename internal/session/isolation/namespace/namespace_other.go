//go:build !linux

package namespace

import (
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
)

// Start is unsupported outside Linux.
func (b *Backend) Start(session.Request) (session.Process, error) { return nil, ErrUnsupported }

// Capabilities: none outside Linux (Start fails).
func (b *Backend) Capabilities() session.Capabilities { return session.Capabilities{Init: true} }

// Prepare leaves the peer and the policy as the session gave them.
func (b *Backend) Prepare(*launch.Spec, *confine.Policy) error { return nil }
