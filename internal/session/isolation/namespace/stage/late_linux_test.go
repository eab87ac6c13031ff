package stage

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadLate: the whole of it is read; one cut short (the supervisor
// gone mid-write) is refused, never used in part.
func TestReadLate(t *testing.T) {
	for _, tc := range []struct {
		sent string
		want []string
		ok   bool
	}{
		{"loki-stage-late 1\nmask \"/run/a.sock\"\nother-root \"/run/loki\"\nother-root \"/tmp/x/loki\"\nend\n", []string{"/run/loki", "/tmp/x/loki"}, true},
		{"loki-stage-late 1\nend\n", nil, true},
		{"loki-stage-late 1\nmask \"/run/a.sock\"\nother-root \"/run/loki\"\nother-root \"/tmp/x", nil, false},
		{"loki-stage-late 1\nmask \"/run/a.sock\"\nother-root \"/run/loki\"\n", nil, false},
		{``, nil, false},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(tc.sent)
		w.Close()
		fd, err := unix.Dup(int(r.Fd()))
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		late, err := readLate(fd)
		if got := late.OtherRoots; (err == nil) != tc.ok || !slices.Equal(got, tc.want) || (len(got) > 0 && !slices.Equal(late.Mask, []string{"/run/a.sock"})) {
			t.Errorf("%q: %q, %v; want %q, ok %v", tc.sent, got, err, tc.want, tc.ok)
		}
	}
}
