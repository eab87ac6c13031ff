//go:build linux

package pid1

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/pid1/pid1test"
	"github.com/loki-sh/loki/internal/testutil"
)

// A prelude near the 1 MiB limit (the env of an agent with large tokens)
// is garbage once the peer runs: the init hands that memory back shortly
// after the spawn, so a long session's PID 1 stays small. The bound sits
// between the two populations the runs show (docs/loki-init.md).
func TestLargePreludeMemoryIsReturned(t *testing.T) {
	t.Parallel()
	marks := markerDir(t)
	spec := shell("echo up > " + marks + "/up; read x; exit 0")
	for i := 0; i < 14; i++ {
		spec.Env[fmt.Sprintf("LOKI_BIG_%d", i)] = strings.Repeat(strconv.Itoa(i%10), 64<<10)
	}
	s := start(t, pid1test.Config{Spec: spec, KeepStdinOpen: true,
		Flags: []string{"-lease-duration", "3s", "-grace", "2s", "-wait-after-eof"}})
	waitFile(t, marks+"/up")
	const limit = 6<<20 + 512<<10
	var rss int64
	small := testutil.WaitUntil(10*time.Second, func() bool {
		rss = vmRSS(t, s.PID())
		return rss <= limit
	})
	s.CloseStdin()
	if !small {
		t.Fatalf("the init's RSS stayed at %d KiB after a %d KiB prelude, want <= %d KiB", rss>>10, 14*64, limit>>10)
	}
	requireCode(t, s.Wait(waitShort), 0)
}

func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kib, _ := strconv.ParseInt(f[1], 10, 64)
			return kib << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
