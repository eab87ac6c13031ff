package pycompat_test

import (
	"encoding/json"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/loki-sh/loki/internal/pycompat"
	"github.com/loki-sh/loki/internal/testutil"
)

// python runs script under the installed python3 with in as JSON on its
// stdin and decodes the JSON it prints into out. Every table below keeps
// the reference's answers and is also checked here, row by row, against
// the interpreter, so a row that stops being Python's fails.
func python(t *testing.T, script string, in, out any) {
	t.Helper()
	py := testutil.RequireCommand(t, "python3")
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", "import json, sys\nargs = json.load(sys.stdin)\n"+script)
	cmd.Stdin = strings.NewReader(string(b))
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("python3 printed %q: %v", res, err)
	}
}

var negZero = math.Copysign(0, -1)

// numberRows are inputs to int() and float(), with int's answer (ok false:
// ValueError) and float's.
var numberRows = []struct {
	in  string
	i   int
	iok bool
	f   float64
	fok bool
}{
	{"5", 5, true, 5, true}, {" 3 ", 3, true, 3, true}, {"\t\n1\u00a0", 1, true, 1, true},
	{"-0", 0, true, negZero, true}, {"-2", -2, true, -2, true}, {"+7", 7, true, 7, true}, {"007", 7, true, 7, true},
	{"1_0", 10, true, 10, true}, {"1__0", 0, false, 0, false}, {"_1", 0, false, 0, false},
	{"1_", 0, false, 0, false}, {"+_1", 0, false, 0, false}, {"++1", 0, false, 0, false},
	{"0x10", 0, false, 0, false}, {"", 0, false, 0, false}, {" ", 0, false, 0, false},
	{"\x1c5", 0, false, 0, false}, {"5\x1f", 0, false, 0, false}, {"\u00855", 5, true, 5, true},
	{"\u30005\u3000", 5, true, 5, true}, {"5\x00", 0, false, 0, false}, {"1,5", 0, false, 0, false},
	{"\u0661\u0662", 12, true, 12, true}, {"\u0663.\u0665", 0, false, 3.5, true},
	{"\uff11\uff10", 10, true, 10, true}, {"\U0001d7d9", 1, true, 1, true}, {"\u00b2", 0, false, 0, false},
	{"2.5", 0, false, 2.5, true}, {".5", 0, false, 0.5, true}, {"5.", 0, false, 5, true},
	{"1.e3", 0, false, 1000, true}, {"1e+3", 0, false, 1000, true}, {"1_0.2_5", 0, false, 10.25, true},
	{"1e1_0", 0, false, 1e10, true}, {".", 0, false, 0, false}, {"e5", 0, false, 0, false},
	{"1e", 0, false, 0, false}, {"1e++3", 0, false, 0, false}, {"1._5", 0, false, 0, false},
	{"inf", 0, false, math.Inf(1), true}, {"-Infinity", 0, false, math.Inf(-1), true},
	{"INF", 0, false, math.Inf(1), true}, {"infinit", 0, false, 0, false},
	{"1e999", 0, false, math.Inf(1), true}, {"-1e999", 0, false, math.Inf(-1), true}, {"1e-999", 0, false, 0, true},
	{"2.5\x1c", 0, false, 0, false}, {"9223372036854775807", math.MaxInt64, true, 9223372036854775807, true},
	{"-9223372036854775808", math.MinInt64, true, -9223372036854775808, true},
}

func TestIntAndFloat(t *testing.T) {
	in := make([]string, len(numberRows))
	for i, r := range numberRows {
		in[i] = r.in
	}
	// Python's answers, with inf as a string (JSON has no infinity).
	var got []struct {
		I *int64
		F *string
	}
	python(t, `
def attempt(f, s):
    try:
        return f(s)
    except ValueError:
        return None
out = []
for s in args:
    i, f = attempt(int, s), attempt(float, s)
    out.append({"I": i, "F": None if f is None else repr(f)})
print(json.dumps(out))`, in, &got)
	for n, r := range numberRows {
		py := got[n]
		if (py.I != nil) != r.iok || py.I != nil && *py.I != int64(r.i) {
			t.Errorf("int(%q): python3 says %v, the table %d, %v", r.in, deref(py.I), r.i, r.iok)
		}
		if want := pyFloatRepr(r.f, r.fok); want != derefS(py.F) {
			t.Errorf("float(%q): python3 says %s, the table %s", r.in, derefS(py.F), want)
		}
		if i, ok := pycompat.Int(r.in); ok != r.iok || ok && i != r.i {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", r.in, i, ok, r.i, r.iok)
		}
		if f, ok := pycompat.Float(r.in); ok != r.fok || ok && (f != r.f || math.Signbit(f) != math.Signbit(r.f)) {
			t.Errorf("Float(%q) = %v, %v; want %v, %v", r.in, f, ok, r.f, r.fok)
		}
	}
	for _, s := range []string{"nan", " -NaN ", "+nan"} {
		if f, ok := pycompat.Float(s); !ok || !math.IsNaN(f) {
			t.Errorf("Float(%q) = %v, %v; want nan", s, f, ok)
		}
	}
	// The one departure from Python, which has big ints.
	if _, ok := pycompat.Int("9223372036854775808"); ok {
		t.Error("Int accepted a value outside int64")
	}
}

func deref(p *int64) any {
	if p == nil {
		return "ValueError"
	}
	return *p
}

func derefS(p *string) string {
	if p == nil {
		return "ValueError"
	}
	return *p
}

// pyFloatRepr is repr(float) for the values of numberRows.
func pyFloatRepr(f float64, ok bool) string {
	switch {
	case !ok:
		return "ValueError"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f) && math.Abs(f) < 1e16:
		return strconv.FormatFloat(f, 'f', 1, 64) // keeps -0.0
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Every decimal digit both Go and python3 know has the same value in both.
func TestDecimalDigits(t *testing.T) {
	var runes []string
	for _, tab := range []*unicode.RangeTable{unicode.Nd} {
		for _, rg := range tab.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				runes = append(runes, string(r))
			}
		}
		for _, rg := range tab.R32 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				runes = append(runes, string(r))
			}
		}
	}
	var values []*int64
	python(t, `
out = []
for s in args:
    try:
        out.append(int(s))
    except ValueError:
        out.append(None)  # a digit newer than this python's Unicode
print(json.dumps(out))`, runes, &values)
	known := 0
	for i, s := range runes {
		if values[i] == nil {
			continue
		}
		known++
		if got, ok := pycompat.Int(s); !ok || int64(got) != *values[i] {
			t.Errorf("Int(%q U+%04X) = %d, %v; python3 says %d", s, []rune(s)[0], got, ok, *values[i])
		}
	}
	if known < 500 {
		t.Fatalf("python3 knew only %d of %d digits; the check cannot be trusted", known, len(runes))
	}
}

// Strip strips exactly the runes str.isspace() counts, over all of Unicode.
func TestStrip(t *testing.T) {
	var spaces []rune
	python(t, "print(json.dumps([c for c in range(0x110000) if chr(c).isspace()]))", nil, &spaces)
	want := map[rune]bool{}
	for _, r := range spaces {
		want[r] = true
	}
	for r := rune(0); r < 0x110000; r++ {
		if pycompat.IsSpace(r) != want[r] {
			t.Errorf("IsSpace(U+%04X) = %v, python3 says %v", r, !want[r], want[r])
		}
	}
	for in, out := range map[string]string{
		" \t a b \n": "a b", "\x1c\x1dx\x1e\x1f": "x", "\u00a0\u2028x\u3000": "x", "\u200bx": "\u200bx", "": "",
	} {
		if got := pycompat.Strip(in); got != out {
			t.Errorf("Strip(%q) = %q, want %q", in, got, out)
		}
	}
}

// Repr quotes as repr(str) does, row by row and over the printable and
// unprintable runes of the Basic Multilingual Plane.
func TestRepr(t *testing.T) {
	rows := map[string]string{
		"":                     "''",
		"abc":                  "'abc'",
		"it's":                 `"it's"`,
		`say "hi"`:             `'say "hi"'`,
		`'"`:                   `'\'"'`,
		"a\\b":                 `'a\\b'`,
		"\n\r\t":               `'\n\r\t'`,
		"\x00\x1b\x7f":         `'\x00\x1b\x7f'`,
		"\u0085\u00a0\u00e9":   `'\x85\xa0é'`,
		"\u200b\u2028\u3000":   `'\u200b\u2028\u3000'`,
		"\U0001f600\U000e0001": "'\U0001f600\\U000e0001'",
		"--flag=x":             "'--flag=x'",
	}
	var in []string
	for s := range rows {
		in = append(in, s)
	}
	var got []string
	python(t, "print(json.dumps([repr(s) for s in args]))", in, &got)
	for i, s := range in {
		if got[i] != rows[s] {
			t.Errorf("repr(%q): python3 says %s, the table %s", s, got[i], rows[s])
		}
		if r := pycompat.Repr(s); r != rows[s] {
			t.Errorf("Repr(%q) = %s, want %s", s, r, rows[s])
		}
	}
	// Each rune of the Basic Multilingual Plane alone, but those only the
	// newer Unicode of the Go toolchain has assigned (python3 says Cn).
	var bmp []int
	for r := 0; r < 0x10000; r++ {
		if r < 0xd800 || r > 0xdfff {
			bmp = append(bmp, r)
		}
	}
	var py [][2]string
	python(t, "import unicodedata\nprint(json.dumps([(repr(chr(c)), unicodedata.category(chr(c))) for c in args]))", bmp, &py)
	newer := 0
	for i, r := range bmp {
		if py[i][1] == "Cn" && unicode.IsPrint(rune(r)) {
			newer++
			continue
		}
		if got := pycompat.Repr(string(rune(r))); got != py[i][0] {
			t.Errorf("Repr(U+%04X) = %s, python3 says %s", r, got, py[i][0])
		}
	}
	if newer > 1000 {
		t.Fatalf("%d runes are newer than python3's Unicode; the check cannot be trusted", newer)
	}
}
