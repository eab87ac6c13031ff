//go:build unix && !linux && !darwin

package procid

// Stat is unsupported here; identities can never be captured, so nothing is
// ever signalled on such a platform (fail closed).
func Stat(pid int) (Status, error) { return Status{}, ErrUnsupported }

// BirthToken falls back to the imprecise ps token.
func BirthToken(pid int) (string, error) { return psToken(pid) }
