package oci

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// recordFile, in every bundle, names the runtime flavour and container id,
// so a later session can delete the runtime's state of a container whose
// supervisor was killed (runc keeps /run/runc/<id> when nobody deletes it).
const recordFile = "container.json"

type record struct {
	Runtime string `json:"runtime"` // "crun" or "runc": a flavour, never a path
	ID      string `json:"id"`
}

// validID is exactly what newID makes.
// Compiled on first use: every run of the binary (the namespace stage
// too) would pay for it at start otherwise.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^loki-[0-9a-f]{16}$`) })

func writeRecord(bundle, flavour, id string) error {
	b, err := json.Marshal(record{Runtime: flavour, ID: id})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(bundle, recordFile), b, 0o600)
}

// CleanStale is the backend's session.StaleCleaner: it runs "<runtime> delete -f <id>" for each bundle
// record under a stale session's scratch dir. The record is untrusted: only
// the two known flavours, resolved on PATH, and only ids of our own format
// are used, so the worst a forged record can do is delete another stale
// loki container.
func CleanStale(scratch string) {
	records, _ := filepath.Glob(filepath.Join(scratch, "bundle-*", recordFile))
	for _, path := range records {
		r, ok := readRecord(path)
		if !ok {
			continue
		}
		rt, flavour, err := ResolveRuntime(r.Runtime)
		if err != nil || flavour != r.Runtime {
			continue
		}
		p := &process{rt: rt, id: r.ID, shim: flavour == "crun" && needsHybridShim()}
		p.quiet("delete", "-f", r.ID)
	}
}

func readRecord(path string) (record, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 4096 {
		return record{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return record{}, false
	}
	var r record
	if json.Unmarshal(b, &r) != nil || (r.Runtime != "crun" && r.Runtime != "runc") || !validID().MatchString(r.ID) {
		return record{}, false
	}
	return r, true
}
