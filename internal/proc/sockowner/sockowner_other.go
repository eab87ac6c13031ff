//go:build !linux

package sockowner

import (
	"errors"
	"net/netip"
)

// ErrNotFound: no process of the namespace holds a socket bound there.
var ErrNotFound = errors.New("sockowner: no process holds that socket")

// Find has no /proc to read outside Linux.
func Find(anchor int, local netip.AddrPort) (int, string, error) {
	return 0, "", errors.New("sockowner: Linux only")
}
