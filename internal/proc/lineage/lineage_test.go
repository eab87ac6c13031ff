package lineage

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestExitCodeFor(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"not found", ErrNotFound, 127},
		{"wrapped not found", errors.Join(errors.New("x"), ErrNotFound), 127},
		{"permission", ErrPermission, 126},
		{"launch", ErrLaunch, 125},
		{"anything else", errors.New("boom"), 125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExitCodeFor(c.err); got != c.want {
				t.Fatalf("ExitCodeFor(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	cases := []struct {
		grace, want time.Duration
	}{
		{0, 500 * time.Millisecond},                      // floor
		{200 * time.Millisecond, 500 * time.Millisecond}, // 0.4 s < floor
		{2 * time.Second, 2200 * time.Millisecond},       // supervisor default
		{10 * time.Second, 10200 * time.Millisecond},
	}
	for _, c := range cases {
		if got := budget(c.grace); got != c.want {
			t.Errorf("budget(%v) = %v, want %v", c.grace, got, c.want)
		}
	}
}

func TestEmptyOutcomeMarshalsEmptyLists(t *testing.T) {
	b, err := json.Marshal(EmptyOutcome())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"checked":false,"detected":false,"quiescent":false,"term_sent":[],"kill_sent":[],"remaining_pids":[],"error":""}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}

func TestChildEnvReplacesOurVariables(t *testing.T) {
	in := []string{"A=1", TokenEnv + "=outer", gateEnv + "=1:forged", "B=2"}
	got := childEnv(in, "tok", "0123456789abcdef0123456789abcdef")
	want := []string{"A=1", "B=2", TokenEnv + "=tok", gateEnv + "=1:0123456789abcdef0123456789abcdef"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestValidNonce(t *testing.T) {
	cases := map[string]bool{
		"0123456789abcdef0123456789abcdef":  true,
		"0123456789ABCDEF0123456789abcdef":  false, // upper case is not ours
		"0123456789abcdef0123456789abcde":   false,
		"0123456789abcdef0123456789abcdef0": false,
		"":                                  false,
		"zz23456789abcdef0123456789abcdef":  false,
	}
	for in, want := range cases {
		if got := validNonce(in); got != want {
			t.Errorf("validNonce(%q) = %v, want %v", in, got, want)
		}
	}
}
