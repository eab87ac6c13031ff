package deadline

import (
	"os"
	"testing"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// FuzzParseControl: arbitrary bytes never panic, and anything accepted is
// exactly one record whose canonical re-encoding parses to the same identity.
func FuzzParseControl(f *testing.F) {
	if self, err := procid.Capture(os.Getpid()); err == nil {
		f.Add(controlRecord(self))
	}
	f.Add([]byte(`{"schema":"loki-deadline-control/v1","pid":1,"identity":"proc:b:1"}`))
	f.Add([]byte(`{"schema":"loki-deadline-control/v1","pid":1,"pid":2,"identity":"proc:b:1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := parseControl(b)
		if err != nil {
			return
		}
		again, err := parseControl(controlRecord(id))
		if err != nil || again != id {
			t.Fatalf("accepted %q as %v, re-encoding gives %v, %v", b, id, again, err)
		}
	})
}
