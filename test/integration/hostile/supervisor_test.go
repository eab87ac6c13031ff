//go:build linux

package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunIDPlantedFile: the runner plants something hostile at
// .loki/state/trust-run-id, the file the supervisor's poll loop reads.
// The hard timeout must still stop it on time, and the supervisor must
// not read the file whole (before: a FIFO hung the loop so the run stayed
// `running` past its timeout, and a sparse file was read every poll).
func TestRunIDPlantedFile(t *testing.T) {
	requireLandlock(t)
	for _, tc := range []struct{ name, plant string }{
		{"fifo", "mkfifo .loki/state/trust-run-id"},
		{"dev-zero", "ln -s /dev/zero .loki/state/trust-run-id"},
		{"sparse", "truncate -s 1G .loki/state/trust-run-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t)
			r := b.start(true, "mkdir -p .loki/state && "+tc.plant+" && echo planted && exec sleep 60", "--hard-timeout", "2")
			r.waitLog("planted")
			time.Sleep(500 * time.Millisecond) // a few polls over the planted file
			pid, _ := r.record()["supervisor_pid"].(float64)
			if hwm := peakRSS(int(pid)); hwm > 100<<20 {
				t.Errorf("supervisor peak RSS %d MiB with a %s at trust-run-id", hwm>>20, tc.name)
			}
			code, ok := r.exit(15 * time.Second)
			if !ok {
				t.Fatalf("supervisor still running 13 s past its 2 s hard timeout; record %v", r.record())
			}
			rec := r.record()
			if code != 143 || rec["state"] != "exited" || rec["deadline_reason"] != "hard_timeout" || rec["run_id"] != "" {
				t.Errorf("exit %d, record state %v deadline %v run_id %q", code, rec["state"], rec["deadline_reason"], rec["run_id"])
			}
		})
	}
}

// peakRSS is VmHWM of pid in bytes (0 when it cannot be read).
func peakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestSparseFileInWorkTree: `truncate -s 1T big` in a git workspace costs
// the runner nothing. The run must end at once, with no digest and a
// final_tree_error saying why (before: 35 s for the digest to read the
// holes, and about 68 GiB of them reached the 5-minute digest cap).
func TestSparseFileInWorkTree(t *testing.T) {
	requireLandlock(t)
	b := newBox(t)
	if out, err := exec.Command("git", "-C", b.ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	start := time.Now()
	r := b.start(true, "truncate -s 1T big")
	code, ok := r.exit(wait)
	if !ok {
		t.Fatalf("still running after %v", wait)
	}
	rec := r.record()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v", took)
	}
	treeErr, _ := rec["final_tree_error"].(string)
	if code != 0 || rec["final_tree_sha256"] != "" || !strings.Contains(treeErr, "digest bound") {
		t.Errorf("exit %d, final_tree_sha256 %q, final_tree_error %q", code, rec["final_tree_sha256"], treeErr)
	}
}

// TestPlantedGitOnSupervisorPath: the runner writes a `git` into a runtime
// write path that is also on the supervisor's PATH (~/.cargo/bin beside a
// ~/.cargo write path). The supervisor runs git for the digest after the
// runner, unconfined and as root: it must never run that one (before: it
// did, and the planted script wrote outside the boundary).
func TestPlantedGitOnSupervisorPath(t *testing.T) {
	requireLandlock(t)
	b := newBox(t)
	if out, err := exec.Command("git", "-C", b.ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	pwned := filepath.Join(b.root, "pwned")
	b.extra = []string{"PATH=" + b.out + ":" + os.Getenv("PATH")}
	r := b.start(true, "printf '#!/bin/sh\\ntouch "+pwned+"\\nexec /usr/bin/git \"$@\"\\n' > "+b.out+"/git && chmod 755 "+b.out+"/git && printf '#!/bin/sh\\ntouch "+pwned+"\\n' > "+b.out+"/gpg && chmod 755 "+b.out+"/gpg")
	code, ok := r.exit(wait)
	if !ok || code != 0 {
		t.Fatalf("exit %d (%v); stderr %q", code, ok, r.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(b.out, "git")); err != nil {
		t.Fatalf("the runner could not plant git: %v", err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the supervisor ran the runner's git")
	}
	if d, _ := r.record()["final_tree_sha256"].(string); len(d) != 64 {
		t.Errorf("final_tree_sha256 %q: the system git should have digested the tree", d)
	}
}

// TestDigestBoundKnob: LOKI_BUILD_DIGEST_MAX_BYTES moves the bound: a
// 5-byte tree has no digest under 4 and has one under 5.
func TestDigestBoundKnob(t *testing.T) {
	for _, tc := range []struct {
		max    string
		digest bool
	}{{"4", false}, {"5", true}} {
		b := newBox(t)
		if out, err := exec.Command("git", "-C", b.ws, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		b.extra = []string{"LOKI_BUILD_DIGEST_MAX_BYTES=" + tc.max}
		r := b.start(false, "printf 12345 > five")
		if code, ok := r.exit(wait); !ok || code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
		rec := r.record()
		d, _ := rec["final_tree_sha256"].(string)
		treeErr, _ := rec["final_tree_error"].(string)
		if tc.digest != (len(d) == 64) || tc.digest != (treeErr == "") {
			t.Errorf("bound %s: final_tree_sha256 %q, final_tree_error %q", tc.max, d, treeErr)
		}
	}
}
