package testutil

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// PrepareOCIUserNS does for an OCI config with a user namespace (oci-spec's
// default as root) what docs/cluster.md asks of whoever runs the bundle:
// the control dir (and its lease, when there is one yet) readable by the
// namespace's gid (0750, 0640; a lease holder then writes each lease 0640
// with that group), and loki-init's mount points in the rootfs, which the
// namespace's root cannot create there. A config without one is left as
// it is.
func PrepareOCIUserNS(t testing.TB, config []byte, rootfs, control string) {
	t.Helper()
	var spec struct {
		Linux struct {
			GIDMappings []struct{ HostID int } `json:"gidMappings"`
		}
	}
	if err := json.Unmarshal(config, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Linux.GIDMappings) == 0 {
		return
	}
	gid := spec.Linux.GIDMappings[0].HostID
	for path, mode := range map[string]os.FileMode{control: 0o750, filepath.Join(control, "lease"): 0o640} {
		if err := os.Chown(path, -1, gid); errors.Is(err, fs.ErrNotExist) && path != control {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(rootfs, ".loki", "control"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(rootfs, ".loki", "init"), os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
