//go:build linux

package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/isolation/mounts"
)

// socketDirs are where the host's daemons keep their pathname sockets
// (/var/run is normally a link to /run; rootless daemons use
// /run/user/UID).
var socketDirs = []string{"/run", "/var/run"}

// maxSocketWalk bounds the walk over socketDirs.
const maxSocketWalk = 20000

// maskSockets covers every unix socket under socketDirs with /dev/null,
// except those in writable paths. A read-only mount does not stop
// connect(2): a uid-0 peer could otherwise talk to dockerd's or
// containerd's root-owned 0660 socket and start a privileged container,
// which is host root.
func maskSockets(writable []string) error {
	seen := map[string]bool{}
	n := 0
	for _, dir := range socketDirs {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		err = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: nothing the peer can reach through it either
			}
			if n++; n > maxSocketWalk {
				return fmt.Errorf("more than %d entries under %s: cannot vouch for its sockets; use --fs host or --hide %s", maxSocketWalk, real, real)
			}
			if d.Type()&fs.ModeSocket == 0 || mounts.UnderAny(path, writable) {
				return nil
			}
			err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
			if errors.Is(err, unix.EACCES) {
				// In a dir the stage cannot search (a private user
				// namespace's stage has no override of host modes):
				// the peer, with less, cannot connect to it either.
				return nil
			}
			if err != nil {
				return fmt.Errorf("mask socket %s: %w", path, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
