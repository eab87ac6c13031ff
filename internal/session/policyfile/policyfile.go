package policyfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// ErrInvalid is a policy file or profile that cannot be used as it is.
var ErrInvalid = errors.New("invalid policy file")

// MaxSize bounds what is read: a policy is a few dozen lines.
const MaxSize = 1 << 20

// kind is how a key's value is written.
type kind int

const (
	scalar kind = iota // a string (or, for limits, a number)
	list               // an array of strings
)

// Keys are the settings a file may hold, each named as its flag.
var Keys = map[string]kind{
	"isolation":  scalar,
	"fs":         scalar,
	"write":      list,
	"hide":       list,
	"network":    scalar,
	"allow-host": list,
	"user":       scalar,
	"userns":     scalar,
	"env":        list,
	"pids-max":   scalar,
	"memory-max": scalar,
	"cpu-max":    scalar,
}

// Source says where a setting came from.
type Source struct {
	File    string // the file, or "" for a built-in profile
	Line    int
	Profile string // the profile table it was in, "" for the top level
}

func (s Source) String() string {
	switch {
	case s.File == "":
		return "built-in profile " + s.Profile
	case s.Profile != "":
		return fmt.Sprintf("%s:%d [profile.%s]", s.File, s.Line, s.Profile)
	default:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
}

// Setting is one key's value(s); a scalar has one.
type Setting struct {
	Key    string
	Values []string
	Source Source
}

// Policy is what a file (and a profile in it) says, in key order.
type Policy struct {
	Settings []Setting
}

// Get returns the setting of key, if the policy has one.
func (p Policy) Get(key string) (Setting, bool) {
	for _, s := range p.Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// doc is a parsed file: its top-level settings and its profiles.
type doc struct {
	top      map[string]Setting
	profiles map[string]map[string]Setting
}

// Load reads path and returns its top level with the profile named
// profile ("" for none) laid over it: a profile's key replaces the top
// level's. A profile the file lacks is an error naming those it has.
func Load(path, profile string) (Policy, error) {
	data, err := read(path)
	if err != nil {
		return Policy{}, err
	}
	d, err := parse(path, data)
	if err != nil {
		return Policy{}, err
	}
	return d.with(path, profile)
}

func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file", ErrInvalid, path)
	}
	buf := make([]byte, MaxSize+1)
	n, _ := f.Read(buf)
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	if n > MaxSize {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrInvalid, path, MaxSize)
	}
	return buf[:n], nil
}

func (d doc) with(path, profile string) (Policy, error) {
	merged := map[string]Setting{}
	for k, s := range d.top {
		merged[k] = s
	}
	if profile != "" {
		prof, ok := d.profiles[profile]
		if !ok {
			return Policy{}, fmt.Errorf("%w: %s: no [profile.%s] (it has: %s)", ErrInvalid, path, profile, names(d.profiles))
		}
		for k, s := range prof {
			merged[k] = s
		}
	}
	var p Policy
	for _, k := range sortedKeys(merged) {
		p.Settings = append(p.Settings, merged[k])
	}
	return p, nil
}

func names(m map[string]map[string]Setting) string {
	if len(m) == 0 {
		return "no profiles"
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]Setting) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parse checks data as TOML first (duplicate keys, syntax), then walks
// it for the settings and their lines.
func parse(path string, data []byte) (doc, error) {
	var any map[string]any
	if err := toml.Unmarshal(data, &any); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return doc{}, fmt.Errorf("%w: %s:%d: %s", ErrInvalid, path, row, de.Error())
		}
		return doc{}, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	d := doc{top: map[string]Setting{}, profiles: map[string]map[string]Setting{}}
	var p unstable.Parser
	p.Reset(data)
	table, profile := d.top, ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			key, line := keyOf(&p, e)
			if len(key) != 2 || key[0] != "profile" {
				return doc{}, fmt.Errorf("%w: %s:%d: unknown table [%s] (only [profile.NAME])", ErrInvalid, path, line, strings.Join(key, "."))
			}
			profile = key[1]
			table = map[string]Setting{}
			d.profiles[profile] = table
		case unstable.ArrayTable:
			key, line := keyOf(&p, e)
			return doc{}, fmt.Errorf("%w: %s:%d: unknown table [[%s]]", ErrInvalid, path, line, strings.Join(key, "."))
		case unstable.KeyValue:
			key, line := keyOf(&p, e)
			src := Source{File: path, Line: line, Profile: profile}
			if len(key) != 1 {
				return doc{}, fmt.Errorf("%w: %s: unknown key %q (keys: %s)", ErrInvalid, src, strings.Join(key, "."), known())
			}
			k, ok := Keys[key[0]]
			if !ok {
				return doc{}, fmt.Errorf("%w: %s: unknown key %q (keys: %s)", ErrInvalid, src, key[0], known())
			}
			vals, err := values(e.Value(), k)
			if err != nil {
				return doc{}, fmt.Errorf("%w: %s: %s: %v", ErrInvalid, src, key[0], err)
			}
			table[key[0]] = Setting{Key: key[0], Values: vals, Source: src}
		}
	}
	if err := p.Error(); err != nil {
		return doc{}, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	return d, nil
}

func known() string {
	var out []string
	for k := range Keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// keyOf returns a key's parts and the line it starts on.
func keyOf(p *unstable.Parser, n *unstable.Node) ([]string, int) {
	var parts []string
	line := 0
	it := n.Key()
	for it.Next() {
		k := it.Node()
		parts = append(parts, string(k.Data))
		if line == 0 && k.Raw.Length > 0 {
			line = p.Shape(k.Raw).Start.Line
		}
	}
	return parts, line
}

func values(v *unstable.Node, k kind) ([]string, error) {
	if k == list {
		if v.Kind != unstable.Array {
			return nil, fmt.Errorf("want an array of strings, e.g. [\"a\", \"b\"]")
		}
		out := []string{}
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind != unstable.String {
				return nil, fmt.Errorf("want an array of strings; %s is not a string", c.Kind)
			}
			out = append(out, string(c.Data))
		}
		return out, nil
	}
	switch v.Kind {
	case unstable.String:
		return []string{string(v.Data)}, nil
	case unstable.Integer:
		n, err := strconv.ParseInt(strings.ReplaceAll(string(v.Data), "_", ""), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: not an integer", v.Data)
		}
		return []string{strconv.FormatInt(n, 10)}, nil
	case unstable.Float:
		return []string{strings.ReplaceAll(string(v.Data), "_", "")}, nil
	}
	return nil, fmt.Errorf("want a string (or a number), not %s", v.Kind)
}

// Find returns the policy file a session in workspace uses when none is
// named: the workspace's .loki/policy.toml, else the user's
// configDir/loki/policy.toml; "" when there is neither.
func Find(workspace, configDir string) string {
	var candidates []string
	if workspace != "" {
		candidates = append(candidates, filepath.Join(workspace, ".loki", "policy.toml"))
	}
	if configDir != "" {
		candidates = append(candidates, filepath.Join(configDir, "loki", "policy.toml"))
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
