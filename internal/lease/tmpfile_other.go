//go:build !linux

package lease

// writeUnnamed: O_TMPFILE is Linux's; the caller writes a named temp file.
func writeUnnamed(string, []byte, int) (string, bool, error) { return "", false, nil }
