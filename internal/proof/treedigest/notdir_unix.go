//go:build unix

package treedigest

import (
	"errors"

	"golang.org/x/sys/unix"
)

func isNotDir(err error) bool { return errors.Is(err, unix.ENOTDIR) }
