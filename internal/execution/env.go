package execution

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Tuning knobs read from the supervisor's environment.
const (
	EnvStopGrace       = "LOKI_BUILD_STOP_GRACE_SECONDS"
	EnvPoll            = "LOKI_BUILD_SUPERVISOR_POLL_SECONDS"
	EnvDescendantGrace = "LOKI_BUILD_DESCENDANT_GRACE_SECONDS"
)

// Defaults of the knobs above.
const (
	DefaultStopGrace       = 10 * time.Second
	DefaultPoll            = 200 * time.Millisecond
	DefaultDescendantGrace = 2 * time.Second
)

// positiveSeconds reads a number of seconds from the environment. Anything
// that is not a finite positive number (unset, garbage, 0, negative, nan,
// inf) yields def, as the reference's _positive_float_env does for the
// values a caller can meaningfully give.
func positiveSeconds(name string, def time.Duration) time.Duration {
	raw, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	f, ok := pyFloat(raw)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e9 {
		return def
	}
	return time.Duration(f * float64(time.Second))
}

// readRunID returns the run id minted by run.sh in
// <loki-dir>/state/trust-run-id, or "" unless it starts with "run-" and
// contains no path separator (it names a directory under proofs/).
func readRunID(lokiDir string) string {
	if lokiDir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(lokiDir, "state", "trust-run-id"))
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(b))
	if !strings.HasPrefix(v, "run-") || strings.ContainsAny(v, `/\`) {
		return ""
	}
	return v
}
