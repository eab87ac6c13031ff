package egress

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrRule is an --allow-host value that does not parse.
var ErrRule = errors.New("invalid --allow-host")

// Rule is one allowed destination.
type Rule struct {
	// Host is a lower-case DNS name or an IP literal; with Subdomains it
	// is the suffix every allowed name ends with (after a dot).
	Host       string
	Subdomains bool
	// Port is the one allowed port; 0 allows 443 and 80.
	Port int
}

func (r Rule) String() string {
	h := r.Host
	if r.Subdomains {
		h = "*." + h
	}
	if r.Port == 0 {
		return h
	}
	return net.JoinHostPort(h, strconv.Itoa(r.Port))
}

// Rules is an allowlist.
type Rules []Rule

// Parse reads --allow-host values: HOST, HOST:PORT, *.DOMAIN[:PORT], an
// IPv4 literal or a bracketed IPv6 one ([::1]:8080).
func Parse(values []string) (Rules, error) {
	var out Rules
	for _, v := range values {
		r, err := parseOne(v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseOne(v string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("%w %q: %s (want HOST, HOST:PORT or *.DOMAIN)", ErrRule, v, why)
	}
	host, port := v, 0
	if h, p, err := net.SplitHostPort(v); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("port must be 1-65535")
		}
		host, port = h, n
	} else if strings.Count(v, ":") > 1 {
		host = strings.Trim(v, "[]") // a bare IPv6 literal
	}
	if ip := net.ParseIP(host); ip != nil {
		return Rule{Host: ip.String(), Port: port}, nil
	}
	r := Rule{Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Subdomains, host = true, rest
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !validName(host) {
		return bad("not a DNS name")
	}
	if r.Subdomains && !strings.Contains(host, ".") {
		return bad("a wildcard needs a domain with a dot, not a top-level name")
	}
	r.Host = host
	return r, nil
}

// validName accepts LDH labels (and underscores, which real names use),
// 1-63 bytes each, 253 in all.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Allows reports whether host:port may be reached.
func (rs Rules) Allows(host string, port int) bool {
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		host = ip.String()
	} else {
		host = strings.TrimSuffix(strings.ToLower(host), ".")
	}
	for _, r := range rs {
		if r.Port == 0 && port != 443 && port != 80 || r.Port != 0 && r.Port != port {
			continue
		}
		if host == r.Host && !r.Subdomains || r.Subdomains && strings.HasSuffix(host, "."+r.Host) {
			return true
		}
	}
	return false
}
