package deadline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ControlEnv names the control file this process writes, if set.
const ControlEnv = "LOKI_DEADLINE_CONTROL_FILE"

// Seconds is a non-negative, finite number of seconds as given by the user;
// it keeps the value so the expiry report echoes it exactly.
type Seconds float64

// ParseSeconds accepts a finite, non-negative decimal number of seconds.
func ParseSeconds(name, s string) (Seconds, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%w: --%s %q: want a number of seconds >= 0", ErrUsage, name, s)
	}
	if v > 1e9 {
		return 0, fmt.Errorf("%w: --%s %q: too large", ErrUsage, name, s)
	}
	return Seconds(v), nil
}

// Duration converts to a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// json renders like Python's float repr for ordinary values: 5.0, 0.25.
func (s Seconds) json() string {
	v := float64(s)
	if v == math.Trunc(v) && v < 1e16 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Config is one deadline run.
type Config struct {
	Hard  Seconds // wall time since start; must be > 0
	Idle  Seconds // time since the last output byte; 0 = off, else < Hard
	Grace Seconds // how long the lineage gets between SIGTERM and SIGKILL
	// ControlFile, if set, is where this process writes its control record.
	ControlFile string
}

// Validate reports the first problem, as a one-line usage error.
func (c Config) Validate() error {
	switch {
	case c.Hard <= 0:
		return fmt.Errorf("%w: --hard must be > 0 seconds", ErrUsage)
	case c.Idle < 0 || c.Grace < 0:
		return fmt.Errorf("%w: --idle and --grace must be >= 0 seconds", ErrUsage)
	case c.Idle > 0 && c.Idle >= c.Hard:
		return fmt.Errorf("%w: --idle (%ss) must be less than --hard (%ss)", ErrUsage, c.Idle.json(), c.Hard.json())
	}
	return nil
}

// event is the single line reported on expiry.
func (c Config) event(reason string) []byte {
	return []byte(`{"type":"loki_provider_deadline","reason":"` + reason +
		`","hard_seconds":` + c.Hard.json() + `,"idle_seconds":` + c.Idle.json() + "}\n")
}
