package canonjson

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// lines reads a testdata file as lines without their trailing newline.
func lines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexLines(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, l := range lines(t, name) {
		b, err := hex.DecodeString(l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, string(b))
	}
	return out
}

// goldenFor reads the golden lines of testdata/name, one for each input.
func goldenFor(t *testing.T, in []string, name string) []string {
	t.Helper()
	want := lines(t, name)
	if len(in) != len(want) {
		t.Fatalf("%d inputs, %d golden lines", len(in), len(want))
	}
	return want
}

func TestStringsMatchPython(t *testing.T) {
	in := hexLines(t, "strings.in")
	want := goldenFor(t, in, "strings.golden")
	for i, s := range in {
		if got := string(String(s)); got != want[i] {
			t.Errorf("String(%q) = %s, Python wrote %s", s, got, want[i])
		}
		// Marshal of a bare string is the same bytes.
		if got, err := Marshal(s); err != nil || string(got) != want[i] {
			t.Errorf("Marshal(%q) = %s, %v; want %s", s, got, err, want[i])
		}
	}
}

func TestKeyOrderMatchesPython(t *testing.T) {
	m := map[string]any{}
	for i, k := range hexLines(t, "keys.in") {
		m[k] = i
	}
	got, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := golden(t, "keys.golden"); !bytes.Equal(got, want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFloatsMatchPythonRepr(t *testing.T) {
	in := lines(t, "floats.in")
	want := goldenFor(t, in, "floats.golden")
	for i, h := range in {
		bits, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(bits)
		if got := string(AppendFloat(nil, f)); got != want[i] {
			t.Errorf("float %s (%v) = %s, Python wrote %s", h, f, got, want[i])
		}
	}
}

func TestNumbersNormalizeLikePythonLoads(t *testing.T) {
	in := lines(t, "numbers.in")
	want := lines(t, "numbers.golden")
	for i, lit := range in {
		got, err := Marshal(json.Number(lit))
		if err != nil || string(got) != want[i] {
			t.Errorf("json.Number(%s) = %s, %v; Python wrote %s", lit, got, err, want[i])
		}
	}
}

func decodeDoc(t *testing.T) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(golden(t, "doc.in.json")))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDocumentMatchesPython(t *testing.T) {
	for _, tc := range []struct {
		name   string
		encode func(any) ([]byte, error)
		golden string
	}{
		{"compact", Marshal, "doc.compact.golden"},
		{"indent", MarshalIndent, "doc.indent.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.encode(decodeDoc(t))
			if err != nil {
				t.Fatal(err)
			}
			if want := golden(t, tc.golden); !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

type tagged struct {
	Name  string            `json:"name"`
	Skip  string            `json:"-"`
	Opt   string            `json:"opt,omitempty"`
	Items []int             `json:"items"`
	Meta  map[string]string `json:"meta"`
	HTML  string            `json:"html"`
}

func TestTypes(t *testing.T) {
	var nilMap map[string]any
	var nilPtr *int
	seven := 7
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"bools", []any{true, false}, `[true,false]`},
		{"ints", []any{int(-1), int8(-8), int16(16), int32(32), int64(-1 << 63), uint(1), uint8(8), uint32(32), uint64(1<<64 - 1)}, `[-1,-8,16,32,-9223372036854775808,1,8,32,18446744073709551615]`},
		{"float32 widens", float32(0.5), `0.5`},
		{"int slice", []int{3, 1, 2}, `[3,1,2]`},
		{"string slice", []string{"b", "a"}, `["b","a"]`},
		{"string map", map[string]string{"b": "1", "a": "2"}, `{"a":"2","b":"1"}`},
		{"typed map", map[string]int{"z": 1, "y": 2}, `{"y":2,"z":1}`},
		{"map of slices", map[string][]string{"k": {"v"}}, `{"k":["v"]}`},
		{"nil map", nilMap, `null`},
		{"nil pointer", nilPtr, `null`},
		{"pointer", &seven, `7`},
		{"slice of maps", []map[string]any{{"b": 1, "a": nil}}, `[{"a":null,"b":1}]`},
		{"struct via tags", tagged{Name: "n\xc3\xa9", Skip: "x", Items: []int{}, Meta: map[string]string{"z": "", "a": "<&>"}, HTML: "<b>"},
			`{"html":"<b>","items":[],"meta":{"a":"<&>","z":""},"name":"n\u00e9"}`},
		{"raw message", json.RawMessage(`{"b":1.50,"a":[1e2]}`), `{"a":[100.0],"b":1.5}`},
		{"nan inf", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, `[NaN,Infinity,-Infinity]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s want %s", got, tc.want)
			}
		})
	}
}

func TestUnsupported(t *testing.T) {
	deep := any([]any{})
	for i := 0; i < maxDepth+5; i++ {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		name string
		in   any
	}{
		{"int keys", map[int]string{1: "a"}},
		{"bytes", []byte("x")},
		{"channel", make(chan int)},
		{"bad number", json.Number("01")},
		{"bad number 2", json.Number("1.")},
		{"bad number 3", json.Number("")},
		{"too deep", deep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Marshal(tc.in); !errors.Is(err, ErrUnsupported) {
				t.Errorf("err = %v, want ErrUnsupported", err)
			}
		})
	}
}

func TestIndentShape(t *testing.T) {
	got, err := MarshalIndent(map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{1, map[string]any{"d": "e"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"e\"\n    }\n  ]\n}"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "b", -1},
		{"b", "a", 1},
		{"a", "aa", -1},
		{"\xff", "\ue000", -1},      // U+DCFF < U+E000 although 0xff > 0xee
		{"\ud7ff", "\x80", -1},      // U+D7FF < U+DC80
		{"\U0001F600", "\uffff", 1}, // code points, not UTF-16 units
		{"a\xff", "a\xc3\xa9", 1},   // U+DCFF > U+00E9
		{"\xc3\xa9", "\xc3\xa9", 0}, // equal valid
		{"\xed\xa0\x80", "\xed", 1}, // three escaped bytes vs one
		{"x/y", "x.y", 1},           // plain byte order for ASCII
		{"\xc3", "\xc3\xa9", 1},     // U+DCC3 > U+00E9
		{"\xe9", "\xc3\xa9", 1},     // Latin-1 byte vs UTF-8 é
		{"\U0010ffff", "\xff", 1},   // U+10FFFF > U+DCFF
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Compare(tc.b, tc.a); got != -tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
	// On valid UTF-8, code point order is byte order.
	in := []string{"b", "ä", "a", "日", "😀", "\uffff", "z", ""}
	byBytes := slices.Clone(in)
	slices.Sort(byBytes)
	byCompare := slices.Clone(in)
	slices.SortFunc(byCompare, Compare)
	if !slices.Equal(byBytes, byCompare) {
		t.Errorf("valid UTF-8: %q != %q", byCompare, byBytes)
	}
}

// FuzzString checks the invariants Python's encoder guarantees: the output
// is printable ASCII, and for valid UTF-8 it decodes back to the input.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\"\\", "\xff\xfe", "\U0001F600", "\x00\x7f", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for _, c := range out {
			if c < 0x20 || c > 0x7e {
				t.Fatalf("String(%q) has byte %#x", s, c)
			}
		}
		if !utf8.ValidString(s) {
			if !strings.Contains(string(out), `\udc`) {
				t.Fatalf("invalid UTF-8 %q produced no surrogate escape: %s", s, out)
			}
			return
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("String(%q) = %s decodes to %q, %v", s, out, back, err)
		}
	})
}

// FuzzFloat checks that every finite float is written so that it reads back
// bit-exactly and always as a float (a "." or an exponent).
func FuzzFloat(f *testing.F) {
	for _, v := range []float64{0, 1, 1e16, 1e-5, 5e-324, math.MaxFloat64} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		out := string(AppendFloat(nil, v))
		back, err := strconv.ParseFloat(out, 64)
		if err != nil || math.Float64bits(back) != bits {
			t.Fatalf("%v -> %s -> %v (%v)", v, out, back, err)
		}
		if !strings.ContainsAny(out, ".e") {
			t.Fatalf("%v -> %s is not a float literal", v, out)
		}
	})
}

type valuer struct{ path string }

func (v valuer) JSONValue() any { return map[string]any{"path": v.path, "nan": math.NaN()} }

func TestValuer(t *testing.T) {
	got, err := Marshal([]any{valuer{"raw\xff"}, &valuer{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"nan":NaN,"path":"raw\udcff"},{"nan":NaN,"path":"p"}]`; string(got) != want {
		t.Errorf("got %s want %s", got, want)
	}
}
