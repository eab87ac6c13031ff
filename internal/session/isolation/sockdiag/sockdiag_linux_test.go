//go:build linux

package sockdiag

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestPathsFindsOwnSocket: a socket this test binds is listed while it
// exists, and no longer once its path names another file.
func TestPathsFindsOwnSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dg, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "d.sock"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dg.Close()
	got, err := Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{path, filepath.Join(dir, "d.sock")} {
		if !slices.Contains(got, want) {
			t.Fatalf("Paths() = %v, want %s in it", got, want)
		}
	}
	// The path re-used by a plain file: not that socket any more.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	os.Remove(path)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = Paths()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, path) {
		t.Fatalf("Paths() lists %s, now a regular file", path)
	}
}

// TestMessagesAsParseNetlinkMessage: checkMessages and messages accept,
// refuse and split a read as syscall.ParseNetlinkMessage does.
func TestMessagesAsParseNetlinkMessage(t *testing.T) {
	msg := func(l uint32, typ uint16, pad int) []byte {
		b := make([]byte, 16, 16+pad)
		binary.NativeEndian.PutUint32(b, l)
		binary.NativeEndian.PutUint16(b[4:], typ)
		for i := 0; i < pad; i++ {
			b = append(b, byte(i))
		}
		return b
	}
	cases := map[string][]byte{
		"empty":             nil,
		"short of a header": {1, 2, 3},
		"one, no payload":   msg(16, 20, 0),
		"three":             slices.Concat(msg(21, 20, 8), msg(16, 3, 0), msg(20, 2, 4)),
		"unaligned last":    slices.Concat(msg(16, 20, 0), msg(17, 20, 1)),
		"length under 16":   slices.Concat(msg(16, 20, 0), msg(13, 20, 0)),
		"length past end":   slices.Concat(msg(16, 20, 0), msg(40, 20, 4)),
		"huge length":       msg(0xffffffff, 20, 4),
		"trailing bytes":    append(msg(16, 20, 0), 7, 7),
	}
	for name, b := range cases {
		want, werr := syscall.ParseNetlinkMessage(b)
		err := checkMessages(b)
		if (err == nil) != (werr == nil) {
			t.Errorf("%s: checkMessages %v, ParseNetlinkMessage %v", name, err, werr)
			continue
		}
		if err != nil {
			continue
		}
		i := 0
		for typ, data := range messages(b) {
			if i >= len(want) || typ != want[i].Header.Type || !bytes.Equal(data, want[i].Data) {
				t.Errorf("%s: message %d: type %d data %v, want %v", name, i, typ, data, want)
				break
			}
			i++
		}
		if i != len(want) {
			t.Errorf("%s: %d messages, want %d", name, i, len(want))
		}
	}
}
