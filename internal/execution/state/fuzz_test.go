package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzStoreRead feeds the on-disk reader a hostile store: a directory
// named name (any single path element) holding content as state.json.
// Read and List never panic; a record is either the document Decode
// accepts or ErrCorrupt; List names only canonical ids; every accessor the
// CLI uses answers on every field of an accepted record.
func FuzzStoreRead(f *testing.F) {
	for _, seed := range []struct {
		name    string
		content string
	}{
		{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", `{"state":"running","runner_pid":12,"supervisor_pid":"12"}`},
		{"0B7C1A8E-4F6D-4D2A-9C3B-5E8F7A6D1C20", `{"state":"exited"}`},
		{"0b7c1a8e4f6d4d2a9c3b5e8f7a6d1c20", `{}`},
		{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", `{"runner_pid":1e400,"x":-0,"y":99999999999999999999}`},
		{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", "{\"state\":\"run\xffning\"}"},
		{"..", `{}`},
		{"not-an-id", `{"state":"running"}`},
		{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", `{"state":`},
		{"0b7c1a8e-4f6d-4d2a-9c3b-5e8f7a6d1c20", ``},
	} {
		f.Add(seed.name, []byte(seed.content))
	}
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
			return // not a directory name the filesystem can hold
		}
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, name), 0o700); err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(root, name, StateFile), content, 0o600); err != nil {
			t.Fatal(err)
		}
		store := NewStore(root)
		entries, err := store.List()
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		id, idErr := ParseID(name)
		canonical := idErr == nil && id.String() == name
		if len(entries) != map[bool]int{true: 1, false: 0}[canonical] {
			t.Fatalf("List of dir %q: %d entries (canonical %v)", name, len(entries), canonical)
		}
		if idErr != nil {
			return
		}
		st, err := store.Read(id)
		if !canonical {
			// Another spelling of an id names a different directory.
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Read(%s) found dir %q: %v", id, name, err)
			}
			return
		}
		want, wantErr := Decode(content)
		if (err == nil) != (wantErr == nil) || (err != nil && !errors.Is(err, ErrCorrupt)) {
			t.Fatalf("Read: %v, Decode: %v", err, wantErr)
		}
		if len(entries) == 1 && (entries[0].Err == nil) != (err == nil) {
			t.Fatalf("List says %v, Read says %v", entries[0].Err, err)
		}
		if err != nil {
			return
		}
		if len(st) != len(want) {
			t.Fatalf("Read and Decode disagree: %v / %v", st, want)
		}
		for k := range st {
			st.Str(k)
			st.Int(k)
			st.Truthy(k)
			st.Map(k)
		}
	})
}
