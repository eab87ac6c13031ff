//go:build linux

package session

import (
	"encoding/json"
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

// TestStaleDirsSweptAfterKill9: a supervisor killed with SIGKILL leaves its
// session dir (and, for oci, the bundle inside it) behind; the next session
// under the same control root removes it, because the recorded owner is
// provably dead, while a dir whose recorded owner is alive (this test) and
// a dir without a record stay.
func TestStaleDirsSweptAfterKill9(t *testing.T) {
	for _, b := range []backend{get("namespace"), get("oci-runc")} {
		t.Run(b.Name, func(t *testing.T) {
			root := t.TempDir()
			flags := []string{"--control-root", root, "--lease-duration", "2s", "--renew-interval", "200ms"}
			cmd := supervise(t, b, flags, "sh", "-c", "echo ready; sleep 1000")
			stdin, _ := cmd.StdinPipe()
			defer stdin.Close()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if got := newLineReader(stdout).next(t, 60*time.Second); got != "ready" {
				t.Fatalf("peer said %q", got)
			}
			session := descendants(cmd.Process.Pid)
			t.Cleanup(func() { testutil.KillLeftovers(session) })
			stale := sessionDirs(t, root)
			if len(stale) != 1 {
				t.Fatalf("want one session dir under %s, have %v", root, stale)
			}
			container := ""
			if b.Name != "namespace" {
				container = containerID(t, stale[0])
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if container != "" {
				// Kill the orphaned "runc run" too: then nothing but the
				// sweep can delete the runtime's state of the container.
				killRuntime(session)
				if !runtimeKnows(container) {
					t.Fatalf("runc has no state for %s after kill -9: the test is blind", container)
				}
			}
			if _, err := os.Stat(stale[0]); err != nil {
				t.Fatalf("the killed supervisor's dir is already gone (%v): the test is blind", err)
			}
			live := decoy(t, root, true)
			unrecorded := decoy(t, root, false)

			r := run(t, supervise(t, b, flags, "true"), "", generous)
			if r.code != 0 {
				t.Fatalf("next session: exit %d (stderr %q)", r.code, r.stderr)
			}
			if _, err := os.Stat(stale[0]); !os.IsNotExist(err) {
				t.Fatalf("stale dir %s of the killed supervisor was not swept (%v)", stale[0], err)
			}
			for _, d := range []string{live, unrecorded} {
				if _, err := os.Stat(d); err != nil {
					t.Fatalf("%s was swept although its owner may be alive: %v", d, err)
				}
			}
			if container != "" && runtimeKnows(container) {
				t.Fatalf("runc state of the stale container %s was not deleted by the sweep", container)
			}
			if left := sessionDirs(t, root); len(left) != 2 {
				t.Fatalf("after the next session: %v, want only the two decoys", left)
			}
		})
	}
}

// containerID reads the container id the oci backend recorded in its
// bundle inside the session dir.
func containerID(t *testing.T, dir string) string {
	t.Helper()
	records, _ := filepath.Glob(filepath.Join(dir, "scratch", "bundle-*", "container.json"))
	if len(records) != 1 {
		t.Fatalf("no OCI bundle record inside the session dir: the test is blind")
	}
	b, err := os.ReadFile(records[0])
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ ID string }
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		t.Fatalf("bundle record %q: %v", b, err)
	}
	return r.ID
}

// killRuntime SIGKILLs, by verified identity, the runc processes among ids.
func killRuntime(ids []procid.Identity) {
	for _, id := range testutil.Alive(ids) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(id.PID()) + "/cmdline")
		if strings.HasPrefix(filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0]), "runc") {
			syscall.Kill(id.PID(), syscall.SIGKILL)
		}
	}
}

// runtimeKnows reports whether runc still has state for the container.
func runtimeKnows(id string) bool {
	return exec.Command("runc", "state", id).Run() == nil
}

func sessionDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "session-") {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	return out
}

// decoy makes a session dir owned by this (live) test process, or one
// without any owner record.
func decoy(t *testing.T, root string, recorded bool) string {
	t.Helper()
	dir, err := os.MkdirTemp(root, "session-")
	if err != nil {
		t.Fatal(err)
	}
	if !recorded {
		return dir
	}
	self, err := procid.Capture(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	b, _ := json.Marshal(map[string]any{"pid": self.PID(), "token": self.Token(), "pidns": ns})
	if err := os.WriteFile(filepath.Join(dir, "owner"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
