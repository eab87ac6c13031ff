//go:build !linux

package lease

import "crypto/rand"

// randomSeed fills b from the system's random source.
func randomSeed(b []byte) error {
	_, err := rand.Read(b)
	return err
}
