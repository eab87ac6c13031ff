package lease

import "golang.org/x/sys/unix"

// randomSeed fills b from the kernel's random source. It is getrandom(2)
// rather than crypto/rand so the init, which links this package for its
// Watcher, does not carry (and initialise at every start) the crypto
// packages it never uses.
func randomSeed(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
