//go:build linux

package sockdiag

import (
	"encoding/binary"
	"fmt"
	"iter"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// From linux/unix_diag.h (not in x/sys/unix).
const (
	udiagShowName = 0x1
	udiagShowVFS  = 0x2
	unixDiagName  = 0
	unixDiagVFS   = 1
	reqLen        = 24 // struct unix_diag_req
	msgLen        = 16 // struct unix_diag_msg
)

// maxSockets bounds what one dump returns.
const maxSockets = 1 << 16

// Paths returns the paths of the unix sockets bound in this network
// namespace that still name them (see the package doc), each once, in
// the kernel's order, their dirs' symlinks resolved.
func Paths() ([]string, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	req := make([]byte, unix.NLMSG_HDRLEN+reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], 1) // seq
	body := req[unix.NLMSG_HDRLEN:]
	body[0] = unix.AF_UNIX
	ne.PutUint32(body[4:], ^uint32(0)) // every state
	ne.PutUint32(body[12:], udiagShowName|udiagShowVFS)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	dirs := map[string]string{} // canonical's answers, by dir: most sockets share a few
	buf := make([]byte, 64<<10)
	for n := 0; ; {
		r, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sock_diag: %w", err)
		}
		msgs := buf[:r]
		if err := checkMessages(msgs); err != nil {
			return nil, fmt.Errorf("sock_diag: %w", err)
		}
		for typ, data := range messages(msgs) {
			switch typ {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				return nil, fmt.Errorf("sock_diag: the kernel refused the dump (unix_diag missing?)")
			}
			if n++; n > maxSockets {
				return nil, fmt.Errorf("sock_diag: more than %d unix sockets", maxSockets)
			}
			path, ino, dev, ok := parse(data)
			if ok {
				path, ok = canonical(path, dirs)
			}
			if ok && !seen[path] && names(path, ino, dev) {
				seen[path] = true
				out = append(out, path)
			}
		}
	}
}

// checkMessages refuses b, a read of netlink messages, if a header's
// length is short or runs past b, as syscall.ParseNetlinkMessage does;
// messages then walks them in place, where ParseNetlinkMessage would
// copy each header into a slice grown message by message.
func checkMessages(b []byte) error {
	for len(b) >= unix.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || nlmAlign(l) > len(b) {
			return unix.EINVAL
		}
		b = b[nlmAlign(l):]
	}
	return nil
}

// messages yields the type and payload of each message of b, which
// checkMessages accepted.
func messages(b []byte) iter.Seq2[uint16, []byte] {
	return func(yield func(uint16, []byte) bool) {
		ne := binary.NativeEndian
		for len(b) >= unix.NLMSG_HDRLEN {
			l := int(ne.Uint32(b))
			if !yield(ne.Uint16(b[4:]), b[unix.NLMSG_HDRLEN:l]) {
				return
			}
			b = b[nlmAlign(l):]
		}
	}
}

func nlmAlign(l int) int { return (l + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// parse reads one unix_diag_msg: the bound path and its file's inode
// and device, when it has an absolute one.
func parse(b []byte) (path string, ino uint64, dev uint64, ok bool) {
	if len(b) < msgLen {
		return "", 0, 0, false
	}
	var haveName, haveVFS bool
	ne := binary.NativeEndian
	for a := b[msgLen:]; len(a) >= unix.SizeofRtAttr; {
		l := int(ne.Uint16(a[0:]))
		if l < unix.SizeofRtAttr || l > len(a) {
			break
		}
		data := a[unix.SizeofRtAttr:l]
		switch ne.Uint16(a[2:]) {
		case unixDiagName:
			if len(data) > 0 && data[0] == '/' {
				path, haveName = string(trimNUL(data)), true
			}
		case unixDiagVFS:
			if len(data) >= 8 {
				ino, dev, haveVFS = uint64(ne.Uint32(data[0:])), uint64(ne.Uint32(data[4:])), true
			}
		}
		step := (l + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1)
		if step > len(a) {
			break
		}
		a = a[step:]
	}
	return filepath.Clean(path), ino, dev, haveName && haveVFS
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// names reports whether path is now the socket of inode ino on device
// dev (the kernel's dev is the old 32-bit encoding of the superblock's).
func names(path string, ino, dev uint64) bool {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false
	}
	return st.Ino == ino && oldDev(st.Dev) == dev
}

// oldDev is new_encode_dev's inverse view: the kernel reports dev_t as
// (major << 20 | minor) in 32 bits.
func oldDev(d uint64) uint64 { return uint64(unix.Major(d))<<20 | uint64(unix.Minor(d)) }

// canonical resolves the symlinks of path's dir (/var/run is /run), once
// per dir: resolved maps each dir seen to its answer ("" when it has
// none). Each resolution is an lstat per component of the dir.
func canonical(path string, resolved map[string]string) (string, bool) {
	d := filepath.Dir(path)
	dir, ok := resolved[d]
	if !ok {
		dir, _ = filepath.EvalSymlinks(d)
		resolved[d] = dir
	}
	if dir == "" {
		return "", false
	}
	return filepath.Join(dir, filepath.Base(path)), true
}
