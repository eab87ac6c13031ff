package launch

import (
	"errors"
	"testing"
)

func TestParseTTY(t *testing.T) {
	cases := []struct {
		name string
		body string
		want *Winsize
		err  error
	}{
		{"absent", `{"argv":["x"],"cwd":"/","env":{}}`, nil, nil},
		{"null", `{"argv":["x"],"cwd":"/","env":{},"tty":null}`, nil, nil},
		{"size", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":24,"cols":80}}`, &Winsize{24, 80}, nil},
		{"zero size", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":0,"cols":0}}`, &Winsize{}, nil},
		{"largest", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":65535,"cols":65535}}`, &Winsize{65535, 65535}, nil},
		{"too large", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":65536,"cols":80}}`, nil, ErrType},
		{"negative", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":-1,"cols":80}}`, nil, ErrType},
		{"fraction", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":2.5,"cols":80}}`, nil, ErrType},
		{"string", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":"24","cols":80}}`, nil, ErrType},
		{"missing cols", `{"argv":["x"],"cwd":"/","env":{},"tty":{"rows":24}}`, nil, ErrType},
		{"not an object", `{"argv":["x"],"cwd":"/","env":{},"tty":true}`, nil, ErrType},
		{"capitalised key is another key", `{"argv":["x"],"cwd":"/","env":{},"TTY":7}`, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.body))
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse: %v, want %v", err, tc.err)
			}
			if (s.TTY == nil) != (tc.want == nil) || (s.TTY != nil && *s.TTY != *tc.want) {
				t.Fatalf("tty %+v, want %+v", s.TTY, tc.want)
			}
		})
	}
}

func TestEncodeTTYRoundTrip(t *testing.T) {
	for _, w := range []*Winsize{nil, {24, 80}, {0, 65535}} {
		b, err := Encode(Spec{Argv: []string{"sh"}, Cwd: "/", Env: map[string]string{}, TTY: w})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(b[HeaderSize:])
		if err != nil {
			t.Fatalf("%s: %v", b[HeaderSize:], err)
		}
		if (s.TTY == nil) != (w == nil) || (w != nil && *s.TTY != *w) {
			t.Fatalf("%s: tty %+v, want %+v", b[HeaderSize:], s.TTY, w)
		}
	}
}

func TestWinsizeFile(t *testing.T) {
	cases := []struct {
		in   string
		want Winsize
		ok   bool
	}{
		{"24 80\n", Winsize{24, 80}, true},
		{"0 0\n", Winsize{}, true},
		{"65535 65535\n", Winsize{65535, 65535}, true},
		{"24 80", Winsize{}, false},     // torn: no newline
		{"24  80\n", Winsize{}, false},  // two spaces
		{"65536 1\n", Winsize{}, false}, // out of range
		{"024 80\n", Winsize{}, false},  // leading zero
		{"-1 80\n", Winsize{}, false},
		{"+1 80\n", Winsize{}, false},
		{"24 80 1\n", Winsize{}, false},
		{"\n", Winsize{}, false},
		{"", Winsize{}, false},
	}
	for _, tc := range cases {
		got, ok := ParseWinsize([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseWinsize(%q) = %+v %v, want %+v %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if tc.ok {
			if back := string(AppendWinsize(nil, tc.want)); back != tc.in {
				t.Errorf("AppendWinsize(%+v) = %q, want %q", tc.want, back, tc.in)
			}
		}
	}
}
