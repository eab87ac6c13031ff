package pycompat

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Int parses s as Python's int(str) does: surrounding whitespace, an
// optional sign, decimal digits of any script (Unicode Nd) with single
// underscores between them (PEP 515). A value outside int is refused.
func Int(s string) (int, bool) {
	a, ok := asciiNumber(s)
	if !ok {
		return 0, false
	}
	body := strings.TrimLeft(a, "+-")
	if len(a)-len(body) > 1 || !digits(body, false) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(a, "_", ""), 10, 0)
	return int(n), err == nil
}

// Float parses s as Python's float(str) does: surrounding whitespace, an
// optional sign, and decimal digits of any script with single underscores
// between digits, an optional fraction and exponent; or inf, infinity or
// nan in any case. Unlike strconv.ParseFloat it refuses hexadecimal and
// underscores anywhere else; like Python it overflows to ±Inf.
func Float(s string) (float64, bool) {
	a, ok := asciiNumber(s)
	if !ok {
		return 0, false
	}
	body := strings.TrimLeft(a, "+-")
	if len(a)-len(body) > 1 {
		return 0, false
	}
	lower := strings.ToLower(body)
	switch lower {
	case "inf", "infinity":
		return math.Inf(sign(a)), true
	case "nan":
		return math.NaN(), true
	}
	mant, exp, hasExp := strings.Cut(lower, "e")
	whole, frac, _ := strings.Cut(mant, ".")
	if !digits(whole, true) || !digits(frac, true) || (whole == "" && frac == "") {
		return 0, false
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || !digits(e, false) {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(a, "_", ""), 64)
	if ne, isNum := err.(*strconv.NumError); err != nil && !(isNum && ne.Err == strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// asciiNumber does what CPython does before it parses a number: strips
// the whitespace int() and float() ignore and turns every decimal digit of
// another script into its ASCII digit. It refuses invalid UTF-8.
func asciiNumber(s string) (string, bool) {
	s = strings.TrimFunc(s, numberSpace)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			return "", false
		case r < 0x80:
			b.WriteRune(r)
		case unicode.IsDigit(r):
			b.WriteByte('0' + decimal(r))
		default:
			// Not a digit: the parse that follows refuses it.
			b.WriteByte('?')
		}
	}
	return b.String(), true
}

// decimal is the value of an Nd rune. Unicode encodes every script's
// decimal digits as runs of ten, zero first, so the value is the offset
// into its range modulo ten.
func decimal(r rune) byte {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10)
		}
	}
	return 0
}

// digits: ASCII digits with single underscores only between two digits;
// empty is allowed when mayBeEmpty.
func digits(s string, mayBeEmpty bool) bool {
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

// sign is -1 for a string that starts with '-', else 1.
func sign(s string) int {
	if strings.HasPrefix(s, "-") {
		return -1
	}
	return 1
}
