package state

import (
	"errors"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// A device node at runner.log (a copy of /dev/null, which the runner could
// open and write) is refused as not a regular file.
func TestLogRefusesDeviceNodes(t *testing.T) {
	testutil.RequireRoot(t)
	s := NewStore(t.TempDir())
	if _, err := s.Update(testID, map[string]any{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(s.Path(testID, LogFile), syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	if f, err := s.OpenLog(testID); !errors.Is(err, ErrNotRegular) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("OpenLog of a device node: %v, want ErrNotRegular", err)
	}
}
