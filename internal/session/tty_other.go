//go:build !linux

package session

import (
	"os"

	"github.com/loki-sh/loki/internal/launch"
)

type terminal struct{}

// openTerminal: terminal sessions run loki-init, which needs Linux.
func openTerminal(*os.File) (*terminal, error)     { return nil, ErrNotTerminal }
func (t *terminal) size() launch.Winsize           { return launch.Winsize{} }
func (t *terminal) makeRaw() error                 { return ErrNotTerminal }
func (t *terminal) restore()                       {}
func watchResizes(*terminal, string) (stop func()) { return func() {} }
