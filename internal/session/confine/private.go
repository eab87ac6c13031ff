package confine

import (
	"fmt"
	"path/filepath"
	"slices"
)

// NoSocketList refuses a confined session whose backend could not list
// the host's unix sockets (sockdiag): it would not know what it leaves
// reachable.
func NoSocketList(backend string, err error) error {
	return Refuse(backend, "the host's unix sockets out of reach",
		fmt.Sprintf("cannot list them (%v): load unix_diag (modprobe unix_diag)", err))
}

// PrivateDirs are where programs keep temporary files and daemons their
// sockets. The confined fs shows each as an empty tmpfs of the
// session's own, so that no socket a daemon creates or re-creates there
// after the start is seen (a mask of one socket is gone with the inode
// it covered). /dev/shm is the confined /dev's own already.
var PrivateDirs = []string{"/tmp", "/run", "/var/run"}

// RunSize caps each private dir but /tmp: the session keeps little
// there.
const RunSize = 64 << 20

// PrivateHostDirs returns PrivateDirs as they are on this host: symlinks
// resolved (/var/run is /run on most), each once, those missing left out;
// /tmp first.
func PrivateHostDirs() []string {
	var out []string
	for _, d := range PrivateDirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	return out
}
