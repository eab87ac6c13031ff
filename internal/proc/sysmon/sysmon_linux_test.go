//go:build linux

package sysmon

import (
	"maps"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCalmOnlyTheMonitor: Calm gives one thread, the one sleeping in
// nanosleep (the runtime's monitor, polling while a goroutine runs),
// the slack, and leaves every other thread's, the caller's included.
func TestCalmOnlyTheMonitor(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	go func() { // a busy P keeps the monitor polling
		for !stop.Load() {
			runtime.Gosched()
		}
	}()
	time.Sleep(5 * time.Millisecond)
	before := slacks(t)
	want := 3_000_000 // a value no thread has yet (a test run before this one set one)
	for _, v := range before {
		want = max(want, v+1000)
	}
	// Calm gives up when the monitor stays awake through its looks (a
	// loaded machine): look until it caught it asleep, or a second.
	var after map[int]int
	for deadline := time.Now().Add(time.Second); ; {
		Calm(time.Duration(want))
		if after = slacks(t); !maps.Equal(after, before) || time.Now().After(deadline) {
			break
		}
	}
	changed := 0
	for tid, v := range after {
		if v == before[tid] {
			continue
		}
		changed++
		if v != want {
			t.Fatalf("thread %d: slack %d, want %d", tid, v, want)
		}
	}
	if changed != 1 {
		for tid := range after {
			b, _ := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/syscall")
			t.Logf("%d: %.20s", tid, b)
		}
		t.Fatalf("%d threads changed (before %v, after %v); want exactly the monitor", changed, before, after)
	}
}

func slacks(t *testing.T) map[int]int {
	t.Helper()
	tids, err := tasks()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/timerslack_ns")
		if err != nil {
			continue // a thread that ended
		}
		out[tid], _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return out
}
