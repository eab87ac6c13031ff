package lineage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

func TestCgroupOwnerName(t *testing.T) {
	tests := []struct {
		name  string
		pid   int
		start uint64
		ok    bool
	}{
		{cgroupName(4242, 987654, "0123456789abcdef"), 4242, 987654, true},
		{"loki-lineage-0123456789abcdef", 0, 0, false}, // an older supervisor's name: never swept
		{"loki-lineage-x-1-ab", 0, 0, false},
		{"loki-lineage-0-1-ab", 0, 0, false},
		{"other-12-1-ab", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pid, start, ok := cgroupOwner(tc.name)
			if ok != tc.ok || (ok && (pid != tc.pid || start != tc.start)) {
				t.Fatalf("cgroupOwner = %d %d %v, want %d %d %v", pid, start, ok, tc.pid, tc.start, tc.ok)
			}
		})
	}
}

// The cgroup of a supervisor that died uncleanly is removed by the next
// one, once empty; a live owner's cgroup and a populated one are kept.
func TestSweepAbandonedCgroups(t *testing.T) {
	parent, err := cgroupV2Root()
	if err == nil {
		err = probeWritable(parent)
	}
	if err != nil {
		if testutil.InCI() {
			t.Fatalf("CI=true but no writable cgroup v2: %v", err)
		}
		t.Skipf("no writable cgroup v2: %v", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self, err := procSource{root: "/proc"}.stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tag := randomHex(8)
	abandoned := filepath.Join(parent, cgroupName(dead.Process.Pid, 1, tag))
	busy := filepath.Join(parent, cgroupName(dead.Process.Pid, 2, tag))
	live := filepath.Join(parent, cgroupName(os.Getpid(), self.start, tag))
	for _, d := range []string{abandoned, busy, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
	}
	// A process still in an abandoned cgroup (an orphaned runner).
	orphan := exec.Command("sleep", "300")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		orphan.Process.Kill()
		orphan.Wait()
		(&cgroup{dir: busy, dfd: -1}).waitEmpty(schedulingMargin)
	})
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(orphan.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	sweepCgroups(parent)
	for d, want := range map[string]bool{abandoned: false, busy: true, live: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}

func probeWritable(parent string) error {
	d := filepath.Join(parent, "loki-probe-"+randomHex(8))
	if err := os.Mkdir(d, 0o700); err != nil {
		return err
	}
	return os.Remove(d)
}
