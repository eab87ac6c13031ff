package execution

import (
	"math"
	"os"
	"testing"
	"time"
)

// TestPyFloat: rows are what Python 3.11's float(str) returns or refuses.
func TestPyFloat(t *testing.T) {
	bad := math.NaN() // marks a refusal
	cases := []struct {
		in   string
		want float64
	}{
		{"2.5", 2.5}, {" 3 ", 3}, {"\t\n1\u00a0", 1}, {".5", 0.5}, {"5.", 5}, {"1.e3", 1000}, {"1e+3", 1000},
		{"1_0", 10}, {"1_0.2_5", 10.25}, {"1e1_0", 1e10}, {"-2", -2}, {"+2", 2},
		{"inf", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"INF", math.Inf(1)}, {"1e999", math.Inf(1)},
		{"1__0", bad}, {"_1", bad}, {"1_", bad}, {"0x10", bad}, {".", bad}, {"e5", bad}, {"1e", bad},
		{"++1", bad}, {"1e++3", bad}, {"infinit", bad}, {"", bad}, {"2.5\x1c", bad}, {"1,5", bad},
	}
	for _, tc := range cases {
		got, ok := pyFloat(tc.in)
		switch {
		case math.IsNaN(tc.want):
			if ok {
				t.Errorf("pyFloat(%q) = %v, want a refusal", tc.in, got)
			}
		case !ok || got != tc.want:
			t.Errorf("pyFloat(%q) = %v, %v; want %v", tc.in, got, ok, tc.want)
		}
	}
	if f, ok := pyFloat("nan"); !ok || !math.IsNaN(f) {
		t.Errorf("pyFloat(nan) = %v, %v", f, ok)
	}
}

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
