//go:build linux

package confine

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHostIPCOutOfReach: without an IPC namespace a uid-0 peer owns the
// host root's SysV shared memory (a database's buffers). Every backend
// gives the session an IPC namespace of its own; the host finding its
// own segment is the control case.
func TestHostIPCOutOfReach(t *testing.T) {
	var b [4]byte
	rand.Read(b[:])
	key := int(binary.BigEndian.Uint32(b[:])&0x3fffffff) | 0x10000
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Skipf("no SysV shared memory here: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	if _, err := unix.SysvShmGet(key, 0, 0); err != nil {
		t.Fatalf("control: the host cannot find its own segment: %v", err)
	}
	for _, be := range rows() {
		if be.Unprivileged {
			continue // a segment of root's is out of nobody's reach anyway
		}
		for _, flags := range [][]string{nil, {"--fs", "host"}} {
			if flags != nil && be.Name != "namespace" {
				continue
			}
			t.Run(be.Name+"/"+strconv.Itoa(len(flags)), func(t *testing.T) {
				code, out, stderr := session(t, be, flags, netprobe(t, be), "shm", strconv.Itoa(key))
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if r := results(out); r["shm"] != "absent" {
					t.Errorf("%v: the peer reached the host's segment: %q", flags, r["shm"])
				}
			})
		}
	}
}
