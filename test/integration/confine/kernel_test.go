//go:build linux

package confine

import (
	"os"
	"strings"
	"testing"
)

// kernelProbe tries to open (never to write: a write could reach the host
// on a broken build) the kernel files a uid-0 peer must not be able to
// write, and reads the masked ones.
const kernelProbe = `
try() { if printf "" >> "$1" 2>/dev/null; then echo "$1=writable"; else echo "$1=refused"; fi; }
try /proc/sys/kernel/core_pattern
try /proc/sysrq-trigger
n=0
for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/*/cgroup.kill /sys/kernel/mm/transparent_hugepage/enabled; do
	[ -e "$f" ] && { try "$f"; n=$((n+1)); }
done
echo "sysfiles=$n"
echo "kcore=$(head -c 16 /proc/kcore 2>/dev/null | wc -c)"
echo "keys=$(cat /proc/keys 2>/dev/null | wc -c)"
echo "firmware=$(ls -A /sys/firmware 2>/dev/null | wc -l)"
`

// TestPeerCannotWriteKernelInterfaces: the hostile-peer finding of issue
// 18. A root peer without capabilities still owns the root-owned files
// of the shared /sys and of /proc/sys: it could kill any host process
// through cgroup.kill or make the kernel run a program as full root
// through core_pattern. Every backend must refuse those opens and hide
// what Docker's default config masks.
func TestPeerCannotWriteKernelInterfaces(t *testing.T) {
	before, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			code, out, stderr := session(t, b, nil, "sh", "-c", kernelProbe)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			r := results(out)
			if _, ok := r["/proc/sys/kernel/core_pattern"]; !ok {
				t.Fatalf("probe did not run: %q", out)
			}
			for k, v := range r {
				if v == "writable" {
					t.Errorf("the peer can open %s for writing", k)
				}
			}
			if strings.HasPrefix(b.Name, "namespace") && r["sysfiles"] == "0" {
				t.Errorf("the host's /sys/fs/cgroup files were not found: nothing was tested (%q)", out)
			}
			for _, k := range []string{"kcore", "keys", "firmware"} {
				if r[k] != "0" {
					t.Errorf("%s: the peer read %s, want it masked (0)", k, r[k])
				}
			}
		})
	}
	after, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if string(before) != string(after) {
		t.Errorf("the host's core_pattern changed: %q -> %q", before, after)
	}
}
