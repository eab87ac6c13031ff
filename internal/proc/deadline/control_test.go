package deadline

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

func TestParseControl(t *testing.T) {
	self, err := procid.Capture(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	good := string(controlRecord(self))
	tok := strconv.Quote(self.Token())
	pid := strconv.Itoa(self.PID())
	cases := []struct {
		name string
		body string
		ok   bool
	}{
		{"as written", good, true},
		{"reordered keys", `{"identity":` + tok + `,"pid":` + pid + `,"schema":"loki-deadline-control/v1"}`, true},
		{"extra key", `{"schema":"loki-deadline-control/v1","pid":` + pid + `,"identity":` + tok + `,"x":1}`, false},
		{"duplicate key", `{"schema":"loki-deadline-control/v1","pid":` + pid + `,"pid":` + pid + `,"identity":` + tok + `}`, false},
		{"missing identity", `{"schema":"loki-deadline-control/v1","pid":` + pid + `}`, false},
		{"wrong schema", `{"schema":"loki-deadline-control/v2","pid":` + pid + `,"identity":` + tok + `}`, false},
		{"pid as string", `{"schema":"loki-deadline-control/v1","pid":"` + pid + `","identity":` + tok + `}`, false},
		{"fractional pid", `{"schema":"loki-deadline-control/v1","pid":` + pid + `.5,"identity":` + tok + `}`, false},
		{"negative pid", `{"schema":"loki-deadline-control/v1","pid":-1,"identity":` + tok + `}`, false},
		{"imprecise identity", `{"schema":"loki-deadline-control/v1","pid":` + pid + `,"identity":"ps:Mon Jan 1"}`, false},
		{"trailing data", good + `{}`, false},
		{"array", `[1,2,3]`, false},
		{"nested value", `{"schema":{"a":1},"pid":` + pid + `,"identity":` + tok + `}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := parseControl([]byte(c.body))
			if c.ok != (err == nil) {
				t.Fatalf("parseControl(%s) = %v, %v; want ok=%v", c.body, id, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrControl) {
				t.Fatalf("error %v is not ErrControl", err)
			}
			if c.ok && (id.PID() != self.PID() || id.Token() != self.Token()) {
				t.Fatalf("identity %v, want %v", id, self)
			}
		})
	}
}

// startVictim starts a process the test owns and returns its identity.
func startVictim(t *testing.T) (*exec.Cmd, procid.Identity) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	id, err := procid.Capture(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, id
}

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestCancelSignalsOnlyAValidFile(t *testing.T) {
	cmd, id := startVictim(t)
	good := string(controlRecord(id))
	other, err := procid.Restore(id.PID(), id.Token()+"1") // same pid, another birth
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  error
	}{
		{"missing file", func(*testing.T, string) {}, ErrControl},
		{"mode 0644", func(t *testing.T, p string) { writeFile(t, p, good, 0o644) }, ErrControl},
		{"mode 0400", func(t *testing.T, p string) { writeFile(t, p, good, 0o400) }, ErrControl},
		{"symlink to a valid file", func(t *testing.T, p string) {
			real := p + ".real"
			writeFile(t, real, good, 0o600)
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, ErrControl},
		{"second hard link", func(t *testing.T, p string) {
			writeFile(t, p, good, 0o600)
			if err := os.Link(p, p+".link"); err != nil {
				t.Fatal(err)
			}
		}, ErrControl},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, ErrControl},
		{"too large", func(t *testing.T, p string) {
			writeFile(t, p, strings.TrimSuffix(good, "\n")+strings.Repeat(" ", 1100), 0o600)
		}, ErrControl},
		{"extra key", func(t *testing.T, p string) {
			writeFile(t, p, strings.Replace(good, "{", `{"extra":true,`, 1), 0o600)
		}, ErrControl},
		{"wrong identity", func(t *testing.T, p string) { writeFile(t, p, string(controlRecord(other)), 0o600) }, ErrStale},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "control")
			c.setup(t, path)
			if _, err := Cancel(path); !errors.Is(err, c.want) {
				t.Fatalf("Cancel = %v, want %v", err, c.want)
			}
			if !id.Matches() {
				t.Fatal("a refused cancel signalled the process")
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "control")
		writeFile(t, path, good, 0o600)
		pid, err := Cancel(path)
		if err != nil || pid != id.PID() {
			t.Fatalf("Cancel = %d, %v", pid, err)
		}
		err = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("victim ended with %v, want SIGTERM", err)
		}
	})
}

func TestCancelRefusesAFileOwnedBySomeoneElse(t *testing.T) {
	testutil.RequireRoot(t)
	_, id := startVictim(t)
	path := filepath.Join(t.TempDir(), "control")
	writeFile(t, path, string(controlRecord(id)), 0o600)
	if err := os.Lchown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Cancel(path); !errors.Is(err, ErrControl) {
		t.Fatalf("Cancel = %v, want ErrControl", err)
	}
	if !id.Matches() {
		t.Fatal("signalled")
	}
}

func TestControlFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	t.Run("written exclusively, 0600, removed when unchanged", func(t *testing.T) {
		path := filepath.Join(dir, "a")
		old := syscall.Umask(0o277) // must not leak into the file's mode
		c, err := createControl(path)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
			t.Fatalf("control file %v, %v", fi.Mode(), err)
		}
		b, _ := os.ReadFile(path)
		id, err := parseControl(b)
		if err != nil || id.PID() != os.Getpid() {
			t.Fatalf("content %s: %v", b, err)
		}
		if _, err := createControl(path); err == nil {
			t.Fatal("second create succeeded: not exclusive")
		}
		c.remove()
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Fatalf("not removed: %v", err)
		}
	})
	t.Run("changed file is left alone", func(t *testing.T) {
		path := filepath.Join(dir, "b")
		c, err := createControl(path)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, "someone else's\n", 0o600)
		c.remove()
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("changed control file was removed: %v", err)
		}
	})
	t.Run("symlink at the path is refused", func(t *testing.T) {
		path := filepath.Join(dir, "c")
		target := filepath.Join(dir, "target")
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if _, err := createControl(path); err == nil {
			t.Fatal("created through a symlink")
		}
		if _, err := os.Lstat(target); !os.IsNotExist(err) {
			t.Fatal("symlink target was created")
		}
	})
}

var _ = time.Second
