//go:build unix

package session

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestEOFRuleByKindOfStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sock, err := conn.(*net.UnixConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	cases := []struct {
		name  string
		stdin *os.File
		set   EOFRule
		want  EOFRule
	}{
		{"pipe", r, EOFAuto, EOFEnd},
		{"socket", sock, EOFAuto, EOFEnd},
		{"dev null", null, EOFAuto, EOFWait},
		{"file", file, EOFAuto, EOFWait},
		{"none", nil, EOFAuto, EOFWait},
		{"pipe told to wait", r, EOFWait, EOFWait},
		{"dev null told to end", null, EOFEnd, EOFEnd},
	}
	for _, c := range cases {
		if got := (Config{Stdin: c.stdin, EOF: c.set}).eofRule(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for in, want := range map[string]EOFRule{"end": EOFEnd, "wait": EOFWait, "auto": EOFAuto} {
		if got, err := ParseEOFRule(in); err != nil || got != want {
			t.Errorf("ParseEOFRule(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseEOFRule("later"); err == nil {
		t.Error("ParseEOFRule accepted a bad value")
	}
}
