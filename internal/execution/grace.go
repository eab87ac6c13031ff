package execution

import (
	"math"
	"os"
	"time"

	"github.com/loki-sh/loki/internal/pycompat"
)

// Never is a stop grace that never ends: the supervisor sends SIGTERM on a
// stop and never escalates to SIGKILL.
const Never = time.Duration(math.MaxInt64)

// stopGrace reads LOKI_BUILD_STOP_GRACE_SECONDS like the reference does:
// a positive number of seconds; "inf" (or anything too large to count in
// nanoseconds) means Never, which is what the reference's arithmetic does
// with it; anything else not positive, or not a number, is the default.
func stopGrace() time.Duration {
	raw, ok := os.LookupEnv(EnvStopGrace)
	if !ok {
		return DefaultStopGrace
	}
	f, ok := pycompat.Float(raw)
	switch {
	case !ok || math.IsNaN(f) || f <= 0:
		return DefaultStopGrace
	case f >= float64(Never)/float64(time.Second):
		return Never
	}
	return time.Duration(f * float64(time.Second))
}
