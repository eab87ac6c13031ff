package mounts

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseBind(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want Bind
	}{
		{"/a:/b", true, Bind{Source: "/a", Destination: "/b"}},
		{"/a:/b:ro", true, Bind{Source: "/a", Destination: "/b", ReadOnly: true}},
		{"/a:/b:rw", true, Bind{Source: "/a", Destination: "/b"}},
		{"a:/b", false, Bind{}},
		{"/a", false, Bind{}},
		{"/a:/b:xx", false, Bind{}},
	}
	for _, tc := range tests {
		got, err := ParseBind(tc.in)
		if (err == nil) != tc.ok || got != tc.want || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("ParseBind(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

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
		if _, got := Within(tc.path, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, Under says %v", tc.path, tc.dir, got, tc.want)
		}
	}
	if !UnderAny("/b/c", []string{"/a", "/b"}) || UnderAny("/c", []string{"/a", "/b"}) {
		t.Error("UnderAny")
	}
}

// TestControlRootViews: each view showing the control root is listed at
// the container path where it shows it; a view from inside it is refused.
func TestControlRootViews(t *testing.T) {
	root := "/nonexistent-loki/run"
	views := []Bind{{Source: "/", Destination: "/"}, {Source: filepath.Dir(root), Destination: "/h"}, {Source: "/usr", Destination: "/usr"}}
	got, err := ControlRootViews(root, views, nil)
	if want := []string{root, "/h/run"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("views %v, %v; want %v", got, err, want)
	}
	if got, _ := ControlRootViews(root, views[:1], []string{"/nonexistent-loki"}); len(got) != 0 {
		t.Errorf("a view hidden in the rootfs was listed: %v", got)
	}
	if _, err := ControlRootViews(root, []Bind{{Source: root + "/session-1", Destination: "/s"}}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bind inside the root: %v, want ErrInvalid", err)
	}
}
