package docker

import (
	"reflect"
	"testing"

	"github.com/loki-sh/loki/internal/session/peerenv"
)

func TestPeerEnv(t *testing.T) {
	host := []string{"PATH=/host/bin", "HOME=/host/home", "USER=me", "TERM=xterm", "LANG=C.UTF-8", "SECRET=s"}
	img := Image{Env: []string{"PATH=/img/bin", "LANG=en_US.UTF-8", "FOO=img"}}
	tests := []struct {
		name   string
		img    Image
		policy peerenv.Policy
		want   map[string]string
	}{
		{"image env first, client variables where the image sets none, no host PATH/HOME/USER", img, peerenv.Policy{},
			map[string]string{"PATH": "/img/bin", "LANG": "en_US.UTF-8", "FOO": "img", "TERM": "xterm", "HOME": "/root"}},
		{"--env wins over the image", img, peerenv.Policy{Rules: []peerenv.Rule{{Name: "FOO", Value: "flag", Set: true}, {Name: "PATH"}, {Name: "SECRET"}}},
			map[string]string{"PATH": "/host/bin", "LANG": "en_US.UTF-8", "FOO": "flag", "TERM": "xterm", "HOME": "/root", "SECRET": "s"}},
		{"no image PATH: docker's default; non-root user's HOME is /", Image{User: "1000:1000"}, peerenv.Policy{},
			map[string]string{"PATH": peerenv.FallbackPath, "TERM": "xterm", "LANG": "C.UTF-8", "HOME": "/"}},
		{"no defaults: only the image and --env", img, peerenv.Policy{NoDefaults: true, Rules: []peerenv.Rule{{Name: "X", Value: "1", Set: true}}},
			map[string]string{"PATH": "/img/bin", "LANG": "en_US.UTF-8", "FOO": "img", "X": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.img.PeerEnv(tc.policy, host); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("PeerEnv:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestCwd(t *testing.T) {
	for in, want := range map[string]string{"": "/", "/work/": "/work", "rel": "/", "/a/../b": "/b"} {
		if got := (Image{WorkingDir: in}).Cwd(); got != want {
			t.Errorf("Cwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsRoot(t *testing.T) {
	for user, want := range map[string]bool{"": true, "root": true, "0": true, "0:0": true, "root:root": true,
		"1000": false, "node": false, "0:1000": false, "root:staff": false} {
		if got := IsRoot(user); got != want {
			t.Errorf("IsRoot(%q) = %v, want %v", user, got, want)
		}
	}
}
