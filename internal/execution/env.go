package execution

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proof/treedigest"
	"github.com/loki-sh/loki/internal/pycompat"
)

// Tuning knobs read from the supervisor's environment.
const (
	EnvStopGrace       = "LOKI_BUILD_STOP_GRACE_SECONDS"
	EnvPoll            = "LOKI_BUILD_SUPERVISOR_POLL_SECONDS"
	EnvDescendantGrace = "LOKI_BUILD_DESCENDANT_GRACE_SECONDS"
	// EnvDigestMaxBytes bounds the file content the final tree digest
	// reads (treedigest.DefaultMaxBytes unless a positive integer).
	EnvDigestMaxBytes = "LOKI_BUILD_DIGEST_MAX_BYTES"
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
	f, ok := pycompat.Float(raw)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e9 {
		return def
	}
	return time.Duration(f * float64(time.Second))
}

// maxRunIDSize bounds what is read of trust-run-id: a run id is one path
// component, and the file is the runner's to plant (a sparse file of any
// size, a FIFO, a link to /dev/zero).
const maxRunIDSize = 4096

// readRunID returns the run id minted by run.sh in
// <loki-dir>/state/trust-run-id, or "" unless it starts with "run-" and
// contains no path separator (it names a directory under proofs/). The
// file is opened as the receipt beside it is: no link (state/ must be a
// real directory too), no blocking open, a regular file only, at most
// maxRunIDSize bytes; anything else is no run id, never a wait.
func readRunID(lokiDir string) string {
	if lokiDir == "" {
		return ""
	}
	dir := filepath.Join(lokiDir, "state")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	f, err := state.OpenRegular(filepath.Join(dir, "trust-run-id"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRunIDSize+1))
	if err != nil || len(b) > maxRunIDSize {
		return ""
	}
	v := strings.TrimSpace(string(b))
	if !strings.HasPrefix(v, "run-") || strings.ContainsAny(v, `/\`) {
		return ""
	}
	return v
}

// digestMaxBytes is LOKI_BUILD_DIGEST_MAX_BYTES as a positive count of
// bytes, else treedigest's default.
func digestMaxBytes() int64 {
	if n, err := strconv.ParseInt(strings.TrimSpace(os.Getenv(EnvDigestMaxBytes)), 10, 64); err == nil && n > 0 {
		return n
	}
	return treedigest.DefaultMaxBytes
}
