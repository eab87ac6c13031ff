package oci

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadRecord: a bundle record is used only when it names a known
// flavour and an id of our own format; anything else is ignored.
func TestReadRecord(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"runc", `{"runtime":"runc","id":"loki-0123456789abcdef"}`, true},
		{"crun", `{"runtime":"crun","id":"loki-fedcba9876543210"}`, true},
		{"a path instead of a flavour", `{"runtime":"/tmp/evil","id":"loki-0123456789abcdef"}`, false},
		{"foreign id", `{"runtime":"runc","id":"production-db"}`, false},
		{"id with an option", `{"runtime":"runc","id":"--all"}`, false},
		{"torn", `{"runtime":"runc"`, false},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "record")
			if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, ok := readRecord(p); ok != tc.ok {
				t.Fatalf("readRecord(%s) ok=%v, want %v", tc.body, ok, tc.ok)
			}
		})
	}
	if err := writeRecord(dir, "runc", newID()); err != nil {
		t.Fatal(err)
	}
	if _, ok := readRecord(filepath.Join(dir, recordFile)); !ok {
		t.Fatal("a record written by writeRecord is not accepted")
	}
}
