package procid

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestTokenMatchesAndStateLetter(t *testing.T) {
	self := os.Getpid()
	tok, err := BirthToken(self)
	if err != nil {
		t.Fatal(err)
	}
	if !TokenMatches(self, tok) {
		t.Errorf("own token %q does not match", tok)
	}
	if s := StateLetter(self); s != "R" && s != "S" {
		t.Errorf("own state %q", s)
	}
	// A zombie keeps its pid and token but never matches.
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ztok, err := BirthToken(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); StateLetter(cmd.Process.Pid) != "Z"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("child never became a zombie")
		}
	}
	if TokenMatches(cmd.Process.Pid, ztok) {
		t.Error("a zombie matched its token")
	}
	cmd.Wait()
	for _, tc := range []struct {
		pid int
		tok string
	}{{self, ""}, {self, tok + "0"}, {0, tok}, {-1, tok}, {cmd.Process.Pid, ztok}} {
		if TokenMatches(tc.pid, tc.tok) {
			t.Errorf("TokenMatches(%d, %q) = true", tc.pid, tc.tok)
		}
	}
	if s := StateLetter(cmd.Process.Pid); s != "" {
		t.Errorf("reaped child has state %q", s)
	}
	if s := StateLetter(0); s != "" {
		t.Errorf("pid 0 has state %q", s)
	}
}
