//go:build linux

package stage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// receiveTrees is the stage's side of the supervisor's sendTrees: n detached mounts, by
// path.
func receiveTrees(sock int, trees []IDMapTree) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range trees {
		buf := make([]byte, 1)
		oob := make([]byte, unix.CmsgSpace(4))
		_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			return out, fmt.Errorf("receive the mount of %s: %w", t.Path, err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return out, fmt.Errorf("receive the mount of %s: no descriptor (the supervisor could not make it)", t.Path)
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			return out, fmt.Errorf("receive the mount of %s: no descriptor", t.Path)
		}
		out[t.Path] = fds[0]
	}
	return out, nil
}

// attachTree attaches the detached mount fd at path, making the mount
// point (in a tmpfs of ours) when missing.
func attachTree(fd int, path string) error {
	if err := mountPoint(fd, path); err != nil {
		return err
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach the idmapped mount of %s: %w", path, err)
	}
	return nil
}
