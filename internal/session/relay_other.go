//go:build unix && !linux

package session

import "os"

func newStdinPipe() (r, w *os.File, err error) { return os.Pipe() }

func relayStdin(dst, src *os.File) error { return copyFallback(dst, src) }
