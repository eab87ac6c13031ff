package confine

import (
	"errors"
	"testing"
)

func TestParseResources(t *testing.T) {
	pids := []struct {
		in   string
		want int64
		ok   bool
	}{{"", 0, true}, {"max", Unlimited, true}, {"0", Unlimited, true}, {"64", 64, true}, {"8", 8, true}, {"7", 0, false}, {"-1", 0, false}, {"many", 0, false}}
	for _, tc := range pids {
		got, err := ParsePidsMax(tc.in)
		if (err == nil) != tc.ok || got != tc.want || (err != nil && !errors.Is(err, ErrPolicy)) {
			t.Errorf("ParsePidsMax(%q) = %d, %v", tc.in, got, err)
		}
	}
	mem := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true}, {"max", 0, true}, {"32M", 32 << 20, true}, {"32m", 32 << 20, true}, {"1G", 1 << 30, true},
		{"2GiB", 2 << 30, true}, {"1536K", 1536 << 10, true}, {"1048576", 1 << 20, true},
		{"4K", 0, false}, {"12Q", 0, false}, {"-1M", 0, false}, {"M", 0, false}, {"99999999999T", 0, false},
	}
	for _, tc := range mem {
		got, err := ParseMemoryMax(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseMemoryMax(%q) = %d, %v", tc.in, got, err)
		}
	}
	cpu := []struct {
		in   string
		want *CPUMax
		ok   bool
	}{
		{"", nil, true}, {"max", nil, true}, {"0.5", &CPUMax{50000, 100000}, true}, {"2", &CPUMax{200000, 100000}, true},
		{"20000 50000", &CPUMax{20000, 50000}, true}, {"0", nil, false}, {"fast", nil, false},
		{"10 100000", nil, false}, {"20000 5000000", nil, false}, {"NaN", nil, false},
	}
	for _, tc := range cpu {
		got, err := ParseCPUMax(tc.in)
		if (err == nil) != tc.ok || (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("ParseCPUMax(%q) = %v, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		r           Resources
		pids        int64
		asked, any_ bool
	}{
		{Resources{}, DefaultPidsMax, false, true},
		{Resources{PidsMax: Unlimited}, 0, false, false},
		{Resources{PidsMax: 10}, 10, true, true},
		{Resources{PidsMax: Unlimited, MemoryMax: 1 << 20}, 0, true, true},
	} {
		if tc.r.Pids() != tc.pids || tc.r.Asked() != tc.asked || tc.r.Any() != tc.any_ {
			t.Errorf("%+v: Pids %d Asked %v Any %v", tc.r, tc.r.Pids(), tc.r.Asked(), tc.r.Any())
		}
	}
	if s := FormatBytes(32 << 20); s != "32M" {
		t.Errorf("FormatBytes = %s", s)
	}
}
