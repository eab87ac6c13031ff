package procio

import (
	"bytes"
	"strconv"
)

// Field is the value of one "name: N" line of a /proc io file (wchar,
// rchar, write_bytes, ...); ok is false when the line is absent or not a
// number.
func Field(b []byte, name string) (n int64, ok bool) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		k, v, found := bytes.Cut(line, []byte(": "))
		if found && string(k) == name {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Wchar is the bytes written through write-like calls (any descriptor),
// the "wchar:" line.
func Wchar(b []byte) (int64, bool) { return Field(b, "wchar") }
