//go:build unix

package state

import (
	"fmt"
	"strings"
)

// ID is a canonical execution id: a UUID in its lower-case 8-4-4-4-12 form.
// The zero value is invalid; only ParseID makes one.
type ID struct{ s string }

// String returns the canonical text.
func (id ID) String() string { return id.s }

// Valid reports whether id came from ParseID.
func (id ID) Valid() bool { return id.s != "" }

// maxIDLen bounds the input before any work: the longest accepted form is
// "urn:uuid:" plus 36 characters.
const maxIDLen = 45

// ParseID accepts the spellings of a UUID that the reference accepts in
// practice — canonical with hyphens, 32 bare hex digits, optionally in
// braces or with a "urn:uuid:" prefix, any letter case — and returns the
// canonical form. Anything else (whitespace, signs, path separators,
// misplaced hyphens) is refused with ErrInvalidID.
func ParseID(raw string) (ID, error) {
	if len(raw) == 0 || len(raw) > maxIDLen {
		return ID{}, ErrInvalidID
	}
	s := raw
	if len(s) >= 9 && strings.EqualFold(s[:9], "urn:uuid:") {
		s = s[9:]
	} else if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	var hex string
	switch len(s) {
	case 32:
		hex = s
	case 36:
		for _, i := range []int{8, 13, 18, 23} {
			if s[i] != '-' {
				return ID{}, ErrInvalidID
			}
		}
		hex = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	default:
		return ID{}, ErrInvalidID
	}
	b := []byte(strings.ToLower(hex))
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ID{}, ErrInvalidID
		}
	}
	return ID{s: fmt.Sprintf("%s-%s-%s-%s-%s", b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])}, nil
}

// MustParseID is ParseID for constants in tests; it panics on bad input.
func MustParseID(raw string) ID {
	id, err := ParseID(raw)
	if err != nil {
		panic(err)
	}
	return id
}
