package pycompat

import "strings"

// IsSpace is Python's str.isspace for one rune. It counts the ASCII
// separators U+001C..U+001F, which unicode.IsSpace leaves out.
func IsSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r >= 0x1c && r <= 0x20:
		return true
	case r == 0x85, r == 0xa0, r == 0x1680, r >= 0x2000 && r <= 0x200a:
		return true
	case r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// Strip is Python's str.strip() with no argument.
func Strip(s string) string { return strings.TrimFunc(s, IsSpace) }

// numberSpace is what int() and float() strip around a number: Python's
// whitespace less the ASCII separators U+001C..U+001F (CPython strips
// only " \t\n\v\f\r" among ASCII there).
func numberSpace(r rune) bool {
	return IsSpace(r) && (r < 0x1c || r > 0x1f)
}
