package state

import (
	"errors"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	const canon = "0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20"
	tests := []struct {
		name, in, want string // want "" = refused
	}{
		{"canonical", canon, canon},
		{"upper case is canonicalised", strings.ToUpper(canon), canon},
		{"bare hex", "0b7c1a8e4f6d4d2a9c3b5e8f7a6d1c20", canon},
		{"braces", "{" + canon + "}", canon},
		{"urn prefix", "urn:uuid:" + canon, canon},
		{"URN prefix any case", "URN:UUID:" + canon, canon},
		{"nil uuid", "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"},
		{"empty", "", ""},
		{"too short", canon[:35], ""},
		{"too long", canon + "0", ""},
		{"misplaced hyphen", "0b7c1a8e4-f6d-4d2a-9c3b-5e8f7a6d1c20", ""},
		{"non-hex", "0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c2g", ""},
		{"path traversal", "../../../../etc/passwd/0b7c1a8e4f6d", ""},
		{"slash inside", "0b7c1a8e/4f6d-4d2a-9c3b-5e8f7a6d1c20", ""},
		{"leading space", " " + canon, ""},
		{"trailing newline", canon + "\n", ""},
		{"sign", "+b7c1a8e4f6d4d2a9c3b5e8f7a6d1c20", ""},
		{"underscore", "0b7c1a8e_4f6d_4d2a_9c3b_5e8f7a6d1c20", ""},
		{"one brace", "{" + canon, ""},
		{"nul byte", canon[:35] + "\x00", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := ParseID(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidID) || id.Valid() {
					t.Fatalf("ParseID(%q) = %q, %v; want ErrInvalidID", tc.in, id, err)
				}
				return
			}
			if err != nil || id.String() != tc.want {
				t.Fatalf("ParseID(%q) = %q, %v; want %q", tc.in, id, err, tc.want)
			}
		})
	}
}

func TestInvalidIDIsRefusedEverywhere(t *testing.T) {
	s := NewStore(t.TempDir())
	var zero ID
	if _, err := s.Read(zero); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Read(zero) = %v", err)
	}
	if _, err := s.Update(zero, map[string]any{"a": 1}); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Update(zero) = %v", err)
	}
	if _, err := s.OpenLog(zero); !errors.Is(err, ErrInvalidID) {
		t.Errorf("OpenLog(zero) = %v", err)
	}
}

// FuzzParseID: whatever is accepted comes out canonical, is a fixed point,
// and can only name a single path element.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", "{0B7C1A8E-4F6D-4D2A-9C3B-5E8F7A6D1C20}", "urn:uuid:0b7c1a8e4f6d4d2a9c3b5e8f7a6d1c20", "../x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		id, err := ParseID(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("unexpected error class %v", err)
			}
			return
		}
		s := id.String()
		if len(s) != 36 || strings.ContainsAny(s, "/\\.\x00 ") || strings.ToLower(s) != s {
			t.Fatalf("non-canonical id %q from %q", s, in)
		}
		again, err := ParseID(s)
		if err != nil || again != id {
			t.Fatalf("canonical form %q does not round-trip: %v", s, err)
		}
	})
}
