package execution

import (
	"os"
	"testing"
	"time"
)

// TestStopGrace: "inf" means never escalate, as in the reference; the
// values the reference ignores give the default.
func TestStopGrace(t *testing.T) {
	for raw, want := range map[string]time.Duration{
		"2.5": 2500 * time.Millisecond, "1_0": 10 * time.Second,
		"inf": Never, "Infinity": Never, "1e999": Never, "1e300": Never, "1e10": Never,
		"0": DefaultStopGrace, "-inf": DefaultStopGrace, "nan": DefaultStopGrace, "x": DefaultStopGrace, "": DefaultStopGrace,
	} {
		t.Setenv(EnvStopGrace, raw)
		if got := stopGrace(); got != want {
			t.Errorf("%s=%q: %v, want %v", EnvStopGrace, raw, got, want)
		}
	}
	os.Unsetenv(EnvStopGrace)
	if got := stopGrace(); got != DefaultStopGrace {
		t.Errorf("unset: %v", got)
	}
}
