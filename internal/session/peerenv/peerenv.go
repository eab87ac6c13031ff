package peerenv

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Defaults are the names copied from the supervisor's environment when set
// there: what a terminal program needs to find its home, locale, terminal
// and tools, and nothing that usually carries a secret.
var Defaults = []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "TERM", "TZ", "USER"}

// Terminal are the names that say which terminal the agent draws on
// (colour depth, emulator, version), copied with Defaults when the agent
// runs on a terminal (session -t): a TUI picks its colours and key
// protocol from them (gemini warns "True color support not detected"
// without COLORTERM). They carry no secret.
var Terminal = []string{"COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "VTE_VERSION", "LC_TERMINAL", "LC_TERMINAL_VERSION", "TERMINAL_EMULATOR", "WT_SESSION"}

// FallbackPath is used for PATH when the supervisor has none, so the init
// can still resolve a bare command name.
const FallbackPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ErrName reports an --env entry whose name is empty or contains '=' or NUL.
var ErrName = errors.New("invalid environment variable name")

// ErrValue reports a value containing a NUL byte, which no exec can carry.
var ErrValue = errors.New("environment value contains a NUL byte")

// Rule is one --env entry: NAME copies the supervisor's value (when set),
// NAME=VALUE sets an explicit value.
type Rule struct {
	Name  string
	Value string
	Set   bool // true for NAME=VALUE
}

// ParseRule parses one --env argument. Errors never quote the value: it may
// be a secret.
func ParseRule(arg string) (Rule, error) {
	name, value, set := strings.Cut(arg, "=")
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return Rule{}, fmt.Errorf("--env %q: %w", name, ErrName)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return Rule{}, fmt.Errorf("--env %s: %w", name, ErrValue)
	}
	return Rule{Name: name, Value: value, Set: set}, nil
}

// Policy is a parsed allowlist.
type Policy struct {
	NoDefaults bool // start from nothing instead of Defaults
	// TTY: the agent runs on a terminal; Terminal is copied with
	// Defaults.
	TTY   bool
	Rules []Rule
}

// Parse builds a Policy from --env arguments.
func Parse(args []string, noDefaults bool) (Policy, error) {
	p := Policy{NoDefaults: noDefaults}
	for _, a := range args {
		r, err := ParseRule(a)
		if err != nil {
			return Policy{}, err
		}
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

// Build returns the peer's environment from the supervisor's environment
// (os.Environ form). Later rules win over earlier ones and over defaults.
func (p Policy) Build(supervisor []string) map[string]string {
	host := toMap(supervisor)
	out := map[string]string{}
	if !p.NoDefaults {
		for _, name := range p.defaults() {
			if v, ok := host[name]; ok {
				out[name] = v
			}
		}
		if _, ok := out["PATH"]; !ok {
			out["PATH"] = FallbackPath
		}
	}
	for _, r := range p.Rules {
		switch {
		case r.Set:
			out[r.Name] = r.Value
		default:
			if v, ok := host[r.Name]; ok {
				out[r.Name] = v
			}
		}
	}
	return out
}

// defaults are the names copied unless NoDefaults.
func (p Policy) defaults() []string {
	if p.TTY {
		return append(append([]string{}, Defaults...), Terminal...)
	}
	return Defaults
}

// Names returns the sorted variable names of env, for messages that must
// not print values.
func Names(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k := range env {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func toMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" && strings.IndexByte(kv, 0) < 0 {
			m[k] = v
		}
	}
	return m
}
