package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil is success", nil, OK},
		{"carried code", New(LeaseExpired, base), LeaseExpired},
		{"wrapped carried code", fmt.Errorf("ctx: %w", New(NotLaunched, base)), NotLaunched},
		{"silent", Silent(3), 3},
		{"plain error uses fallback", base, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Of(c.err, 2); got != c.want {
				t.Fatalf("Of = %d, want %d", got, c.want)
			}
		})
	}
}

func TestFromWait(t *testing.T) {
	cases := []struct {
		name      string
		code, sig int
		want      int
	}{
		{"zero", 0, 0, 0},
		{"max", 255, 0, 255},
		{"signal 9", -1, 9, 137},
		{"signal 15", -1, 15, 143},
		{"out of range", 256, 0, Refused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FromWait(c.code, c.sig); got != c.want {
				t.Fatalf("FromWait(%d,%d) = %d, want %d", c.code, c.sig, got, c.want)
			}
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	base := errors.New("boom")
	e := New(Refused, base)
	if !errors.Is(e, base) || e.Error() != "boom" {
		t.Fatalf("unwrap/text broken: %v", e)
	}
	if Silent(4).Error() == "" {
		t.Fatal("silent error has no text")
	}
}
