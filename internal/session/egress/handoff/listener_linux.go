//go:build linux

package handoff

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// SendListener makes the proxy's listening socket in the calling
// process's network namespace (127.0.0.1:ProxyPort; lo must be up) and
// sends it over the unix socket sock, then closes its own copy: the
// socket stays in this namespace wherever its descriptor goes.
func SendListener(sock int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("proxy bind 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("proxy listen: %w", err)
	}
	if err := unix.Sendmsg(sock, []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("proxy handoff: %w", err)
	}
	return nil
}
