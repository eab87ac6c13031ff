//go:build unix && !linux

package session

import (
	"errors"
	"os"
	"sync/atomic"
)

func newStdinPipe(int) (r, w *os.File, err error) { return os.Pipe() }

func relayStdin(dst, src *os.File, moved *atomic.Int64) error {
	return copyFallback(dst, src, moved)
}

// unread: no FIONREAD on a pipe here; the prelude counts as read.
func unread(*os.File) (int, error) { return 0, nil }

func dupFile(f *os.File) (*os.File, error) { return nil, errors.ErrUnsupported }

func directStdio(...*os.File) bool { return false }

func shareFIFOs(int, ...*os.File) {}
