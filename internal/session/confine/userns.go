package confine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// UserNS is whether the peer gets a user namespace of its own.
type UserNS string

const (
	// UserNSAuto is the backend's default: on the namespace backend a
	// private one, except with --user or --fs host.
	UserNSAuto UserNS = ""
	// UserNSPrivate maps uid and gid 0 inside to an unprivileged block of
	// host ids (IDRange): the peer is root only over its own namespace.
	UserNSPrivate UserNS = "private"
	// UserNSHost keeps the host's ids: a root supervisor's peer is uid 0
	// without capabilities.
	UserNSHost UserNS = "host"
)

// ParseUserNS parses a --userns value; "" is the backend's default.
func ParseUserNS(s string) (UserNS, error) {
	switch u := UserNS(s); u {
	case UserNSAuto, UserNSPrivate, UserNSHost:
		return u, nil
	}
	return "", fmt.Errorf("%w: --userns %q: want private or host", ErrPolicy, s)
}

// IDRange is the block of host ids a private user namespace maps, from
// inside id 0 on.
type IDRange struct {
	UID, GID, Size uint32
}

// DefaultRangeStart is the first host id of the block used when
// /etc/subuid and /etc/subgid name none for root: just above systemd's
// container range (524288-1879048191), so neither nspawn nor a dynamic
// user picks the same ids.
const DefaultRangeStart = 1879048192

// RangeSize is how many ids the block maps: 0-65535 inside, so files of
// the usual users keep their owners on the workspace's idmapped mount.
const RangeSize = 65536

// PrivateRange returns the host ids a root supervisor maps into a
// private user namespace: root's entries in /etc/subuid and /etc/subgid
// when both exist (the administrator's allocation), else the default
// block. Fewer than RangeSize ids are used as given. The files are read
// once per process: every part of one session (the control dir's group,
// the checks, the mapping) uses the same block.
var PrivateRange = sync.OnceValue(privateRange)

func privateRange() IDRange {
	uid, un, uok := subordinate("/etc/subuid")
	gid, gn, gok := subordinate("/etc/subgid")
	if !uok || !gok {
		return IDRange{UID: DefaultRangeStart, GID: DefaultRangeStart, Size: RangeSize}
	}
	return IDRange{UID: uid, GID: gid, Size: min(un, gn, RangeSize)}
}

// subordinate reads root's first block from an /etc/subuid-style file.
func subordinate(path string) (start, count uint32, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	return parseSubordinate(f)
}

func parseSubordinate(r io.Reader) (start, count uint32, ok bool) {
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(f) != 3 || (f[0] != "root" && f[0] != "0") {
			continue
		}
		s, err1 := strconv.ParseUint(f[1], 10, 32)
		n, err2 := strconv.ParseUint(f[2], 10, 32)
		// Block 0 would map host root; the block must end below 2^32-1.
		if err1 != nil || err2 != nil || s == 0 || n == 0 || s+n > 1<<32-1 {
			continue
		}
		return uint32(s), uint32(n), true
	}
	return 0, 0, false
}

// PrivateUserNS reports whether, under a root supervisor and on a
// backend that gives one by default, the peer of p gets a private user
// namespace: asked for, or by default unless --user or --fs host keeps
// the host's ids.
func (p Policy) PrivateUserNS() bool {
	if p.User != nil {
		return false
	}
	return p.UserNS == UserNSPrivate || p.UserNS == UserNSAuto && p.FS != FSHost
}
