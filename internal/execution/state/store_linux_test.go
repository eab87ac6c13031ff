package state

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

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

// A FIFO, a symlink or a directory at state.json is ErrNotRegular at once:
// opening a FIFO for reading would wait for a writer forever, and List
// would hang with it.
func TestReadRefusesNonRegular(t *testing.T) {
	plants := map[string]func(p string) error{
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symlink": func(p string) error { return os.Symlink("/etc/hostname", p) },
		"dir":     func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			s := NewStore(t.TempDir())
			if err := os.MkdirAll(s.Dir(testID), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := plant(s.Path(testID, StateFile)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Read(testID)
				if err == nil {
					_, err = s.List()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) {
					t.Fatalf("Read = %v, want ErrNotRegular", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked on a non-regular state.json")
			}
			got, err := s.List()
			if err != nil || len(got) != 1 || !errors.Is(got[0].Err, ErrNotRegular) {
				t.Fatalf("List = %+v, %v", got, err)
			}
		})
	}
}
