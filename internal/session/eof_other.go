//go:build unix && !linux

package session

import "golang.org/x/sys/unix"

// pollRDHUP: no such event here; a closed socket reports POLLHUP.
const pollRDHUP = unix.POLLHUP
