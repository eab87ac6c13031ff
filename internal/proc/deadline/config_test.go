package deadline

import (
	"errors"
	"testing"
)

func TestParseSeconds(t *testing.T) {
	cases := []struct {
		in   string
		want Seconds
		ok   bool
	}{
		{"5", 5, true},
		{"0.25", 0.25, true},
		{" 2 ", 2, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e10", 0, false},
		{"5s", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		got, err := ParseSeconds("hard", c.in)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrUsage) {
			t.Errorf("ParseSeconds(%q) error %v is not ErrUsage", c.in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"hard only", Config{Hard: 5, Grace: 1}, true},
		{"idle below hard", Config{Hard: 5, Idle: 1, Grace: 1}, true},
		{"zero grace", Config{Hard: 5}, true},
		{"no hard", Config{Grace: 1}, false},
		{"idle equal to hard", Config{Hard: 5, Idle: 5}, false},
		{"idle above hard", Config{Hard: 5, Idle: 9}, false},
		{"negative grace", Config{Hard: 5, Grace: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.ok != (err == nil) {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", c.cfg, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrUsage) {
				t.Fatalf("error %v is not ErrUsage", err)
			}
		})
	}
}

func TestEventLine(t *testing.T) {
	cases := []struct {
		cfg    Config
		reason string
		want   string
	}{
		{Config{Hard: 5, Idle: 0}, "hard_timeout", `{"type":"loki_provider_deadline","reason":"hard_timeout","hard_seconds":5.0,"idle_seconds":0.0}` + "\n"},
		{Config{Hard: 1.5, Idle: 0.25}, "idle_timeout", `{"type":"loki_provider_deadline","reason":"idle_timeout","hard_seconds":1.5,"idle_seconds":0.25}` + "\n"},
	}
	for _, c := range cases {
		if got := string(c.cfg.event(c.reason)); got != c.want {
			t.Errorf("event = %s, want %s", got, c.want)
		}
	}
}

// The sink starts our own line on a fresh line even after a relayed chunk
// that ended mid-line.
func TestSinkLineNeverSplicesIntoOutput(t *testing.T) {
	var b bytesWriter
	s := &sink{w: &b}
	_ = s.write([]byte("partial"))
	s.line([]byte("{}\n"))
	_ = s.write([]byte("after\n"))
	s.line([]byte("{}\n"))
	if got, want := string(b), "partial\n{}\nafter\n{}\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
