//go:build unix

package seatbelt

import (
	"slices"
	"unicode/utf8"
)

// pyRunes decodes s the way Python decodes a path (UTF-8 with
// surrogateescape): a byte that is not part of valid UTF-8 becomes the
// code point U+DC00+byte.
func pyRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			r, n = 0xDC00+rune(s[i]), 1
		}
		out = append(out, r)
		i += n
	}
	return out
}

// pyCompare orders strings as Python orders str: by code point. This is
// byte order for valid UTF-8 but not once escaped bytes are involved.
func pyCompare(a, b string) int { return slices.Compare(pyRunes(a), pyRunes(b)) }

// sortedSet returns the distinct members of paths in Python str order.
func sortedSet(paths []string) []string {
	out := slices.Clone(paths)
	slices.SortFunc(out, pyCompare)
	return slices.Compact(out)
}
