package lease

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An fsynced value is written unnamed and linked whole under a temp name
// (every file system a test dir is on here has O_TMPFILE: ext4, tmpfs).
func TestWriteUnnamed(t *testing.T) {
	dir := t.TempDir()
	name, ok, err := writeUnnamed(dir, []byte("12345678"), -1)
	if !ok || err != nil {
		t.Fatalf("writeUnnamed: ok %v, %v", ok, err)
	}
	if filepath.Dir(name) != dir || !strings.HasPrefix(filepath.Base(name), ".lease-") {
		t.Fatalf("linked as %s", name)
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "12345678" {
		t.Fatalf("value %q (%v)", got, err)
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("dir holds %d entries, want the one temp name", len(entries))
	}
}
