package procid

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestSignalSafe(t *testing.T) {
	cases := []struct {
		name  string
		token string
		want  bool
	}{
		{"linux token", "proc:6f1c-boot:123456", true},
		{"darwin token", "darwin:1700000000:123", true},
		{"linux without boot id", "proc::123", false},
		{"linux non-numeric ticks", "proc:boot:12a", false},
		{"darwin non-numeric", "darwin:17x:1", false},
		{"ps fallback is never safe", "ps:Mon Dec  1 10:00:00 2026", false},
		{"too many parts", "proc:boot:1:2", false},
		{"empty", "", false},
		{"unknown scheme", "bsd:1:2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SignalSafe(c.token); got != c.want {
				t.Fatalf("SignalSafe(%q) = %v, want %v", c.token, got, c.want)
			}
		})
	}
}

func TestCaptureMatchesAndRestore(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux /proc identity")
	}
	id, err := Capture(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id.Token(), "proc:") || !id.Matches() {
		t.Fatalf("own identity %v does not match", id)
	}
	r, err := Restore(id.PID(), id.Token())
	if err != nil || !r.Matches() {
		t.Fatalf("restored identity: %v %v", r, err)
	}
	forged, err := Restore(id.PID(), "proc:other-boot:1")
	if err != nil {
		t.Fatal(err)
	}
	if forged.Matches() {
		t.Fatal("a different token matched a live pid")
	}
	if _, err := Restore(id.PID(), "ps:whenever"); err == nil {
		t.Fatal("imprecise token restored")
	}
	if (Identity{}).Matches() {
		t.Fatal("zero identity matched")
	}
}
