//go:build unix

// Package nofollow opens files an untrusted agent may have planted: a final
// symlink is never followed and a FIFO or device never blocks the open, so
// a hostile work tree cannot redirect a read outside itself or hang the
// reader.
package nofollow
