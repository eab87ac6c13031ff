package stage

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadRoots: the whole list is read; one cut short (the supervisor
// gone mid-write) is refused, never used in part.
func TestReadRoots(t *testing.T) {
	for _, tc := range []struct {
		sent string
		want []string
		ok   bool
	}{
		{`["/run/loki","/tmp/x/loki"]`, []string{"/run/loki", "/tmp/x/loki"}, true},
		{`null`, nil, true},
		{`["/run/loki","/tmp/x`, nil, false},
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
		got, err := readRoots(fd)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, %v; want %q, ok %v", tc.sent, got, err, tc.want, tc.ok)
		}
	}
}
