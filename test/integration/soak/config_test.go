//go:build linux

package soak

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sizes and knobs, from the environment so that `make soak` can run the same
// tests at full size. The defaults are the CI size.
var (
	numSessions  = envInt("LOKI_SOAK_SESSIONS", 32)
	sessionBytes = int64(envInt("LOKI_SOAK_BYTES", 64<<20))
	numRounds    = envInt("LOKI_SOAK_ROUNDS", 100)
	numRuns      = envInt("LOKI_SOAK_RUNS", 100)
	numKillSess  = envInt("LOKI_SOAK_KILL_SESSIONS", 16)
	numKillRuns  = envInt("LOKI_SOAK_KILL_RUNS", 20)
	killBytes    = int64(envInt("LOKI_SOAK_KILL_BYTES", 16<<20))
	killFraction = envFloat("LOKI_SOAK_KILL_FRACTION", 0.3)
	reportPath   = os.Getenv("LOKI_SOAK_REPORT")
	exitCodes    = []int{0, 3, 42}
	// sessionBudget bounds one session; only a hang reaches it.
	sessionBudget = envDuration("LOKI_SOAK_SESSION_TIMEOUT", 5*time.Minute)
)

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 && v <= 1 {
		return v
	}
	return def
}

// figures is one test's table of measured values, logged and, with
// LOKI_SOAK_REPORT, appended to that file for bench/soak.sh.
type figures struct {
	title string
	rows  [][2]string
}

func (f *figures) add(name, format string, a ...any) {
	f.rows = append(f.rows, [2]string{name, fmt.Sprintf(format, a...)})
}

func (f *figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", f.title)
	for _, r := range f.rows {
		fmt.Fprintf(&b, "  %-40s %s\n", r[0], r[1])
	}
	return b.String()
}

var reportMu sync.Mutex

// publish logs the table and appends it to the report file.
func (f *figures) publish(t *testing.T) {
	t.Helper()
	t.Logf("\n%s", f)
	if reportPath == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	fh, err := os.OpenFile(reportPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Errorf("report: %v", err)
		return
	}
	defer fh.Close()
	fmt.Fprintf(fh, "%s\n", f)
}

// percentile of sorted-in-place durations, nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(p*float64(len(d))+0.5) - 1
	return d[max(0, min(i, len(d)-1))]
}

func mib(n float64) string { return fmt.Sprintf("%.1f MiB", n/(1<<20)) }
