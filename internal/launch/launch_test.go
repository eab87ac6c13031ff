package launch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var sentinels = []error{ErrSize, ErrTruncated, ErrSyntax, ErrType, ErrEmptyArgv,
	ErrRelativeCwd, ErrNUL, ErrEnvName, ErrNotExecutable}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if err == s {
			return true
		}
	}
	return false
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		body string
		want error
	}{
		{"ok", `{"argv":["/bin/true"],"cwd":"/","env":{"A":"b"}}`, nil},
		{"ok empty env", `{"argv":["x"],"cwd":"/tmp","env":{}}`, nil},
		{"not json", `{"argv":`, ErrSyntax},
		{"invalid utf-8", "{\"argv\":[\"\xff\"],\"cwd\":\"/\",\"env\":{}}", ErrSyntax},
		{"array", `["/bin/true"]`, ErrType},
		{"null", `null`, ErrType},
		{"argv string", `{"argv":"/bin/true","cwd":"/","env":{}}`, ErrType},
		{"argv numbers", `{"argv":[1],"cwd":"/","env":{}}`, ErrType},
		{"cwd missing", `{"argv":["x"],"env":{}}`, ErrType},
		{"env null", `{"argv":["x"],"cwd":"/","env":null}`, ErrType},
		{"env list", `{"argv":["x"],"cwd":"/","env":["A=b"]}`, ErrType},
		{"env number", `{"argv":["x"],"cwd":"/","env":{"A":1}}`, ErrType},
		{"null in argv", `{"argv":["x",null],"cwd":"/","env":{}}`, ErrType},
		{"null env value", `{"argv":["x"],"cwd":"/","env":{"A":null}}`, ErrType},
		{"empty argv", `{"argv":[],"cwd":"/","env":{}}`, ErrEmptyArgv},
		{"empty argv0", `{"argv":[""],"cwd":"/","env":{}}`, ErrEmptyArgv},
		{"relative cwd", `{"argv":["x"],"cwd":"tmp","env":{}}`, ErrRelativeCwd},
		{"nul in argv", `{"argv":["x","a\u0000b"],"cwd":"/","env":{}}`, ErrNUL},
		{"bad env name", `{"argv":["x"],"cwd":"/","env":{"A=B":"c"}}`, ErrEnvName},
		{"escaped byte", `{"argv":["x","a\udcffb"],"cwd":"/","env":{}}`, nil},
		{"lone high surrogate", `{"argv":["x","a\ud800b"],"cwd":"/","env":{}}`, ErrSyntax},
		{"lone low surrogate below 0x80", `{"argv":["x","\udc41"],"cwd":"/","env":{}}`, ErrSyntax},
		{"lone surrogate in cwd", `{"argv":["x"],"cwd":"/\udfff","env":{}}`, ErrSyntax},
		{"lone surrogate in env value", `{"argv":["x"],"cwd":"/","env":{"A":"\ude00"}}`, ErrSyntax},
		{"surrogate env name", `{"argv":["x"],"cwd":"/","env":{"\udcff":"v"}}`, ErrEnvName},
		{"argv in capitals", `{"ARGV":["x"],"cwd":"/","env":{}}`, ErrType},
		{"cwd capitalised", `{"argv":["x"],"Cwd":"/","env":{}}`, ErrType},
		{"env capitalised", `{"argv":["x"],"cwd":"/","Env":{}}`, ErrType},
		{"unknown keys ignored", `{"argv":["x"],"cwd":"/","env":{},"ENV":1,"extra":[null]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body))
			if !errors.Is(err, tc.want) || (err != nil && !isSentinel(err)) {
				t.Fatalf("Parse: %v, want %v", err, tc.want)
			}
		})
	}
}

// Keys are exact and the last of a repeated key counts, as with the
// reference's json.loads; a differently cased key is another key.
func TestParseKeysAreExact(t *testing.T) {
	s, err := Parse([]byte(`{"argv":["/first"],"Argv":["/cased"],"argv":["/last"],"cwd":"/","env":{"A":"1","a":"2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Argv) != 1 || s.Argv[0] != "/last" {
		t.Errorf("argv %q, want [/last]", s.Argv)
	}
	if len(s.Env) != 2 || s.Env["A"] != "1" || s.Env["a"] != "2" {
		t.Errorf("env %q, want A=1 and a=2", s.Env)
	}
}

func TestParseLength(t *testing.T) {
	cases := []struct {
		hdr  [HeaderSize]byte
		n    int
		want error
	}{
		{[4]byte{0, 0, 0, 0}, 0, ErrSize},
		{[4]byte{0, 0, 0, 1}, 1, nil},
		{[4]byte{0, 0x10, 0, 0}, MaxSize, nil},
		{[4]byte{0, 0x10, 0, 1}, 0, ErrSize},
		{[4]byte{0xff, 0xff, 0xff, 0xff}, 0, ErrSize},
	}
	for _, tc := range cases {
		n, err := ParseLength(tc.hdr)
		if n != tc.n || err != tc.want {
			t.Errorf("%v: %d %v, want %d %v", tc.hdr, n, err, tc.n, tc.want)
		}
	}
}

// FuzzParse: the decoder never panics, refuses only with a sentinel (whose
// text can be printed: no input is quoted), and whatever it accepts is a
// valid Spec that survives an Encode/Parse round trip unchanged.
// TestBytesPassExactly: arguments, cwd and env values that are not UTF-8
// cross the prelude byte for byte, as the reference's surrogateescape
// carries them; nothing is replaced by U+FFFD.
func TestBytesPassExactly(t *testing.T) {
	in := Spec{
		Argv: []string{"/bin/printf", "a\xffb", "\x80", "caf\xc3\xa9", "\xc3", "\U0001F600", "q\"\\/\n\t\x01\x7f"},
		Cwd:  "/tmp/\xfe",
		Env:  map[string]string{"K": "v\xed\xa0\x80", "\u00e9": "\xff"},
	}
	wire, err := Encode(in)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if !utf8.Valid(wire[HeaderSize:]) || strings.ContainsRune(string(wire[HeaderSize:]), utf8.RuneError) {
		t.Fatalf("prelude holds U+FFFD: %q", wire)
	}
	out, err := Parse(wire[HeaderSize:])
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the spec:\n in  %#v\n out %#v", in, out)
	}
	// A Python host writes json.dumps("a\udcffb"): the same bytes result.
	s, err := Parse([]byte(`{"argv":["a\udcffb","\ud83d\ude00"],"cwd":"/","env":{}}`))
	if err != nil || s.Argv[0] != "a\xffb" || s.Argv[1] != "\U0001F600" {
		t.Fatalf("Parse of a Python prelude: %q %v", s.Argv, err)
	}
}

func TestEncodeRefusesUnsendableEnvName(t *testing.T) {
	for _, name := range []string{"A\xffB", "\ufffd"} {
		_, err := Encode(Spec{Argv: []string{"x"}, Cwd: "/", Env: map[string]string{name: "v"}})
		if !errors.Is(err, ErrEnvName) {
			t.Errorf("Encode with env name %q: %v, want ErrEnvName", name, err)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add("a\xffb", "/\x80", "v\xc3")
	f.Add("\U0001F600", "/", "\\u00")
	f.Fuzz(func(t *testing.T, arg, cwd, val string) {
		in := Spec{Argv: []string{"/x", arg}, Cwd: cwd, Env: map[string]string{"K": val}}
		wire, err := Encode(in)
		if err != nil {
			if in.Validate() == nil && len(arg)+len(cwd)+len(val) < MaxSize/8 {
				t.Fatalf("valid spec refused: %v", err)
			}
			return
		}
		out, err := Parse(wire[HeaderSize:])
		if err != nil || !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip %#v -> %#v, %v", in, out, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"argv":["/bin/sh","-c","echo hi"],"cwd":"/","env":{"PATH":"/bin"}}`))
	f.Add([]byte(`{"argv":[],"cwd":"/","env":{}}`))
	f.Add([]byte(`{"argv":["x"],"cwd":"rel","env":{"K":"v"}}`))
	f.Add([]byte("{\"argv\":[\"\\u0000\"],\"cwd\":\"/\",\"env\":{}}"))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"argv":["x"],"cwd":"/","env":{"A":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := Parse(body)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("non-sentinel error %v", err)
			}
			if strings.Contains(err.Error(), string(body)) && len(body) > 3 {
				t.Fatalf("error quotes its input")
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted an invalid spec: %v", err)
		}
		wire, err := Encode(s)
		if err != nil {
			t.Fatalf("accepted spec does not encode: %v", err)
		}
		var hdr [HeaderSize]byte
		copy(hdr[:], wire)
		n, err := ParseLength(hdr)
		if err != nil || n != len(wire)-HeaderSize {
			t.Fatalf("header %d %v for body of %d", n, err, len(wire)-HeaderSize)
		}
		back, err := Parse(wire[HeaderSize:])
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Fatalf("round trip: %+v %v, want %+v", back, err, s)
		}
	})
}

// FuzzParseLength: every header is either refused with ErrSize or names a
// body size within (0, MaxSize].
func FuzzParseLength(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0x10, 0, 0})
	f.Add([]byte{0, 0x10, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var hdr [HeaderSize]byte
		copy(hdr[:], b)
		n, err := ParseLength(hdr)
		if err != nil {
			if err != ErrSize || n != 0 {
				t.Fatalf("%v: %d %v", hdr, n, err)
			}
			return
		}
		if n <= 0 || n > MaxSize {
			t.Fatalf("%v: accepted size %d", hdr, n)
		}
	})
}
