package egress

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]Rule{
		"api.anthropic.com":       {Host: "api.anthropic.com"},
		"API.Example.COM.":        {Host: "api.example.com"},
		"example.com:8443":        {Host: "example.com", Port: 8443},
		"*.githubusercontent.com": {Host: "githubusercontent.com", Subdomains: true},
		"*.example.com:443":       {Host: "example.com", Subdomains: true, Port: 443},
		"10.0.0.1":                {Host: "10.0.0.1"},
		"127.0.0.1:18080":         {Host: "127.0.0.1", Port: 18080},
		"[::1]:8080":              {Host: "::1", Port: 8080},
		"::1":                     {Host: "::1"},
		"_srv.example.com":        {Host: "_srv.example.com"},
	}
	for in, want := range good {
		rs, err := Parse([]string{in})
		if err != nil || len(rs) != 1 || rs[0] != want {
			t.Errorf("Parse(%q) = %v, %v; want %+v", in, rs, err, want)
		}
	}
	for _, in := range []string{"", "*", "*.com", "exa mple.com", "-a.com", "a-.com", "a..com", "example.com:0",
		"example.com:65536", "example.com:http", "http://example.com", "ex/ample.com", "*.*.example.com"} {
		if _, err := Parse([]string{in}); !errors.Is(err, ErrRule) {
			t.Errorf("Parse(%q) = %v, want ErrRule", in, err)
		}
	}
}

func TestAllows(t *testing.T) {
	rs, err := Parse([]string{"api.anthropic.com", "*.example.org", "build.local:8080", "127.0.0.1:18080", "[::1]:9"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host string
		port int
		want bool
	}{
		{"api.anthropic.com", 443, true},
		{"API.ANTHROPIC.COM.", 443, true},
		{"api.anthropic.com", 80, true},
		{"api.anthropic.com", 22, false},
		{"anthropic.com", 443, false},
		{"evil-api.anthropic.com", 443, false},
		{"api.anthropic.com.evil.net", 443, false},
		{"a.example.org", 443, true},
		{"a.b.example.org", 80, true},
		{"example.org", 443, false},
		{"badexample.org", 443, false},
		{"build.local", 8080, true},
		{"build.local", 443, false},
		{"127.0.0.1", 18080, true},
		{"127.0.0.1", 18081, false},
		{"::1", 9, true},
		{"[::1]", 9, true},
		{"0:0:0:0:0:0:0:1", 9, true},
		{"localhost", 18080, false},
	}
	for _, c := range cases {
		if got := rs.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	if (Rules{}).Allows("api.anthropic.com", 443) {
		t.Error("an empty allowlist allowed a destination")
	}
}

// FuzzParse: no value panics the parser, and a rule it accepts prints
// as a value that parses back to the same rule and allows its own host.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"api.anthropic.com", "*.npmjs.org:443", "[::1]:8080", "10.0.0.1", "a:b:c", "*.", "x:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		rs, err := Parse([]string{v})
		if err != nil {
			return
		}
		r := rs[0]
		back, err := Parse([]string{r.String()})
		if err != nil || len(back) != 1 || back[0] != r {
			t.Fatalf("%q parsed as %+v, which prints as %q and parses back as %+v, %v", v, r, r.String(), back, err)
		}
		port := r.Port
		if port == 0 {
			port = 443
		}
		host := r.Host
		if r.Subdomains {
			host = "x." + host
		}
		if !rs.Allows(host, port) {
			t.Fatalf("%q does not allow its own host %s:%d", v, host, port)
		}
	})
}
