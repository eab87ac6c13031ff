package execution

import (
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
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
	f, ok := pyFloat(raw)
	switch {
	case !ok || math.IsNaN(f) || f <= 0:
		return DefaultStopGrace
	case f >= float64(Never)/float64(time.Second):
		return Never
	}
	return time.Duration(f * float64(time.Second))
}

// pyFloat parses s as Python's float(str) does: surrounding whitespace is
// ignored; decimal digits with single underscores between them (PEP 515),
// an optional fraction and exponent; inf, infinity and nan in any case,
// signed or not. Unlike strconv.ParseFloat it refuses hexadecimal and
// underscores anywhere else, and it accepts underscores between digits.
func pyFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, floatSpace)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	if !pyDigits(whole, true) || !pyDigits(frac, true) || (whole == "" && frac == "") {
		return 0, false
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || !pyDigits(e, false) {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !isRange(err) {
		return 0, false
	}
	return f, true
}

// pyDigits: ASCII digits, single underscores only between two digits;
// empty is allowed when mayBeEmpty.
func pyDigits(s string, mayBeEmpty bool) bool {
	if s == "" {
		return mayBeEmpty
	}
	if s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '_' {
			return false
		}
	}
	return true
}

// isRange: ParseFloat overflowed to ±Inf (or underflowed to 0), which
// Python's float also returns rather than refusing.
func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// floatSpace is what Python's float() strips: ASCII blanks (not the
// separators U+001C..U+001F, which str.isspace counts) and the non-ASCII
// Unicode spaces.
func floatSpace(r rune) bool {
	if r < 0x80 {
		return strings.ContainsRune(" \t\n\v\f\r", r)
	}
	return unicode.IsSpace(r)
}
