//go:build linux

package stage

import "testing"

func TestUnder(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/tmp", "/tmp", true}, {"/tmp/a/b", "/tmp", true}, {"/tmpx", "/tmp", false},
		{"/a", "/", true}, {"/", "/a", false}, {"/home/u", "/home/u/proj", false},
	} {
		if got := Under(tc.path, tc.dir); got != tc.want {
			t.Errorf("Under(%q, %q) = %v", tc.path, tc.dir, got)
		}
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\134y`: `/x\y`, `/end\04`: `/end\04`} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
