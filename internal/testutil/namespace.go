package testutil

import (
	"fmt"
	"os"
	"strconv"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// PIDNamespace returns "pid:[inode]" of a process, "" when unreadable.
func PIDNamespace(pid int) string {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return ""
	}
	return link
}

// NamespaceMembers maps each wanted PID namespace ("pid:[inode]") to the
// host pids in it right now, found through the host's /proc. With live,
// zombies count as gone (they run nothing and hold nothing; a dead init
// stays one while its supervisor has not reaped it).
func NamespaceMembers(want map[string]bool, live bool) map[string][]int {
	found := map[string][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ns := PIDNamespace(pid)
		if ns == "" || !want[ns] {
			continue
		}
		if live {
			if st, err := procid.Stat(pid); err != nil || st.State == 'Z' || st.State == 'X' {
				continue
			}
		}
		found[ns] = append(found[ns], pid)
	}
	return found
}

// NamespacePIDs lists the host pids in the PID namespace ns, zombies
// included.
func NamespacePIDs(ns string) []int {
	return NamespaceMembers(map[string]bool{ns: true}, false)[ns]
}

// LiveNamespacePIDs lists the host pids in ns that are not zombies.
func LiveNamespacePIDs(ns string) []int {
	return NamespaceMembers(map[string]bool{ns: true}, true)[ns]
}
