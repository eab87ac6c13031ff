package egress

import (
	"reflect"
	"testing"
)

func TestPeerEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
	}{
		{"empty", nil},
		{"keeps the rest", map[string]string{"PATH": "/bin", "TERM": "xterm"}},
		{"replaces the caller's proxies", map[string]string{
			"PATH": "/bin", "HTTPS_PROXY": "http://elsewhere:8080", "http_proxy": "http://x",
			"ALL_PROXY": "socks5://x", "all_proxy": "socks5://x", "NO_PROXY": "*",
			"NODE_USE_ENV_PROXY": "0",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]string{
				"HTTP_PROXY": ProxyURL, "HTTPS_PROXY": ProxyURL, "http_proxy": ProxyURL, "https_proxy": ProxyURL,
				"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
				"NODE_USE_ENV_PROXY": "1",
			}
			for _, k := range []string{"PATH", "TERM"} {
				if v, ok := tc.in[k]; ok {
					want[k] = v
				}
			}
			in := map[string]string{}
			for k, v := range tc.in {
				in[k] = v
			}
			if got := PeerEnv(tc.in); !reflect.DeepEqual(got, want) {
				t.Errorf("PeerEnv(%v)\n got %v\nwant %v", tc.in, got, want)
			}
			if !reflect.DeepEqual(in, tc.in) && tc.in != nil {
				t.Errorf("PeerEnv changed its argument: %v", tc.in)
			}
		})
	}
}
