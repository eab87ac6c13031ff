package session

import "golang.org/x/sys/unix"

// pollRDHUP reports a socket's peer that shut its writing half.
const pollRDHUP = unix.POLLRDHUP
