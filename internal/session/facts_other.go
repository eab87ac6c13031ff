//go:build unix && !linux

package session

import (
	"time"

	"github.com/loki-sh/loki/internal/pid1/facts"
)

// initFacts is what the init told.
type initFacts struct {
	facts.Told
	initPID, peerPID int
}

// factsListener: loki-init runs on Linux only; elsewhere no init talks.
type factsListener struct{}

func listenFacts(string, int) *factsListener                   { return nil }
func (*factsListener) serve(func() int, bool)                  {}
func (*factsListener) waitPeer(<-chan struct{}, time.Duration) {}
func (*factsListener) snapshot() initFacts                     { return initFacts{Told: facts.New()} }
func (*factsListener) close()                                  {}
func (*factsListener) finish() initFacts                       { return initFacts{Told: facts.New()} }
func (*factsListener) ended() <-chan struct{}                  { return nil }
