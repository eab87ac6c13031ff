package confine

import (
	"errors"
	"strings"
	"testing"
)

func TestParseUserNS(t *testing.T) {
	for in, want := range map[string]UserNS{"": UserNSAuto, "private": UserNSPrivate, "host": UserNSHost} {
		if got, err := ParseUserNS(in); err != nil || got != want {
			t.Errorf("ParseUserNS(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseUserNS("shared"); !errors.Is(err, ErrPolicy) {
		t.Errorf("ParseUserNS(shared): %v, want ErrPolicy", err)
	}
}

func TestParseSubordinate(t *testing.T) {
	for _, tc := range []struct {
		in           string
		start, count uint32
		ok           bool
	}{
		{"root:100000:65536\n", 100000, 65536, true},
		{"alice:100000:65536\n0:200000:1000\n", 200000, 1000, true},
		{"alice:100000:65536\n", 0, 0, false},
		// Block 0 would map the host's root; a block past 2^32-1 wraps.
		{"root:0:65536\nroot:300000:10\n", 300000, 10, true},
		{"root:4294967290:100\n", 0, 0, false},
		{"root:x:1\nroot:5:\n", 0, 0, false},
	} {
		s, n, ok := parseSubordinate(strings.NewReader(tc.in))
		if s != tc.start || n != tc.count || ok != tc.ok {
			t.Errorf("%q: %d, %d, %v; want %d, %d, %v", tc.in, s, n, ok, tc.start, tc.count, tc.ok)
		}
	}
}
