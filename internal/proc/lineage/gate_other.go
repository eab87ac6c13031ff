//go:build !unix

package lineage

import "fmt"

// MaybeRunGate does nothing where Start is unsupported.
func MaybeRunGate() {}

// Start is unsupported on this platform.
func Start(Command) (*Runner, error) {
	return nil, fmt.Errorf("%w: %w", ErrLaunch, ErrUnsupported)
}
