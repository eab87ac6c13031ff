//go:build linux

package sockowner

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// ErrNotFound: no process of the namespace holds a socket bound there.
var ErrNotFound = errors.New("sockowner: no process holds that socket")

// Find names a process, in the network namespace of anchor, holding the
// TCP socket whose local address is local: its pid as /proc shows it
// and its command name.
func Find(anchor int, local netip.AddrPort) (int, string, error) {
	return find("/proc", anchor, local)
}

func find(proc string, anchor int, local netip.AddrPort) (int, string, error) {
	base := proc + "/" + strconv.Itoa(anchor)
	// A v4 client of a dual-stack listener may sit in either table.
	ino, err := inode(base+"/net/tcp", local)
	if err != nil {
		ino, err = inode(base+"/net/tcp6", local)
	}
	if err != nil {
		return 0, "", err
	}
	netns, err := os.Readlink(base + "/ns/net")
	if err != nil {
		return 0, "", err
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0, "", err
	}
	want := "socket:[" + ino + "]"
	best := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (best != 0 && pid > best) {
			continue
		}
		dir := proc + "/" + e.Name()
		if ns, err := os.Readlink(dir + "/ns/net"); err != nil || ns != netns {
			continue
		}
		if holds(dir+"/fd", want) {
			best = pid
		}
	}
	if best == 0 {
		return 0, "", ErrNotFound
	}
	comm, _ := os.ReadFile(proc + "/" + strconv.Itoa(best) + "/comm")
	return best, strings.TrimSuffix(string(comm), "\n"), nil
}

func holds(fdDir, want string) bool {
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fdDir + "/" + fd.Name()); err == nil && l == want {
			return true
		}
	}
	return false
}

// inode finds local in a /proc/net/tcp{,6} table and returns the
// socket's inode number as the table writes it.
func inode(path string, local netip.AddrPort) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	want, mapped := hexAddr(local), hexWords(netip.AddrFrom16(local.Addr().As16()), local.Port(), true)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && (strings.EqualFold(fs[1], want) || strings.EqualFold(fs[1], mapped)) && fs[9] != "0" {
			return fs[9], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", ErrNotFound
}

// hexAddr writes an address as the kernel's tcp tables do: each 32-bit
// word of the address in host byte order, in hex, then ":PORT" in hex.
func hexAddr(ap netip.AddrPort) string {
	return hexWords(ap.Addr(), ap.Port(), false)
}

func hexWords(a netip.Addr, port uint16, mapped bool) string {
	var raw []byte
	if (a.Is4() || a.Is4In6()) && !mapped {
		b := a.Unmap().As4()
		raw = b[:]
	} else {
		b := a.As16()
		raw = b[:]
	}
	var sb strings.Builder
	for i := 0; i < len(raw); i += 4 {
		var w [4]byte
		binary.NativeEndian.PutUint32(w[:], binary.BigEndian.Uint32(raw[i:i+4]))
		sb.WriteString(strings.ToUpper(hex.EncodeToString(w[:])))
	}
	sb.WriteString(":")
	sb.WriteString(strings.ToUpper(strconv.FormatUint(uint64(0x10000|uint32(port)), 16)[1:]))
	return sb.String()
}
