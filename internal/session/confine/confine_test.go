package confine

import (
	"errors"
	"testing"
)

func TestParseUser(t *testing.T) {
	cases := []struct {
		in      string
		want    *User
		wantErr bool
	}{
		{"", nil, false},
		{"65534", &User{65534, 65534}, false},
		{"1000:100", &User{1000, 100}, false},
		{"0:0", &User{0, 0}, false},
		{"nobody", nil, true},
		{"1000:", nil, true},
		{":1000", nil, true},
		{"-1", nil, true},
		{"4294967295", nil, true},
		{"1:2:3", nil, true},
	}
	for _, tc := range cases {
		got, err := ParseUser(tc.in)
		if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrPolicy)) {
			t.Errorf("ParseUser(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("ParseUser(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseNetwork(t *testing.T) {
	for in, want := range map[string]Network{"": NetworkHost, "host": NetworkHost, "none": NetworkNone, "loopback": NetworkLoopback} {
		if got, err := ParseNetwork(in); err != nil || got != want {
			t.Errorf("ParseNetwork(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"bridge", "Host", "lo"} {
		if _, err := ParseNetwork(bad); !errors.Is(err, ErrPolicy) {
			t.Errorf("ParseNetwork(%q) accepted", bad)
		}
	}
	if !(Policy{}).Default() || (Policy{Network: NetworkNone}).Default() || (Policy{User: &User{}}).Default() {
		t.Error("Default() wrong")
	}
}

func TestParseFSAndPaths(t *testing.T) {
	for in, want := range map[string]FS{"": "", "confined": FSConfined, "host": FSHost} {
		if got, err := ParseFS(in); err != nil || got != want {
			t.Errorf("ParseFS(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFS("ro"); !errors.Is(err, ErrPolicy) {
		t.Error("ParseFS(ro) accepted")
	}
	dir := t.TempDir()
	got, err := ParsePaths("write", []string{dir, "."}, dir)
	if err != nil || len(got) != 2 || got[0] != got[1] {
		t.Errorf("ParsePaths = %v, %v", got, err)
	}
	for _, tc := range []struct {
		flag, path string
		ok         bool
	}{
		{"write", dir + "/missing", false},
		{"hide", dir + "/missing", true},
		{"write", "/", false},
		{"hide", "/", false},
	} {
		if _, err := ParsePaths(tc.flag, []string{tc.path}, dir); (err == nil) != tc.ok {
			t.Errorf("ParsePaths(%s, %s) error %v, want ok=%v", tc.flag, tc.path, err, tc.ok)
		}
	}
}
