package policyfile

import (
	_ "embed"
	"fmt"
)

//go:embed builtin.toml
var builtinTOML []byte

// builtinName is how a built-in profile's source reads.
const builtinName = "(built in)"

// BuiltIn returns the built-in profile name, if there is one.
func BuiltIn(name string) (Policy, bool) {
	d, err := parse(builtinName, builtinTOML)
	if err != nil {
		panic(fmt.Sprintf("policyfile: the built-in profiles do not parse: %v", err)) // a test proves they do
	}
	if _, ok := d.profiles[name]; !ok {
		return Policy{}, false
	}
	p, _ := d.with(builtinName, name)
	for i := range p.Settings {
		p.Settings[i].Source = Source{Profile: name}
	}
	return p, true
}

// Resolve is the policy of a session: the file at path ("" for none)
// with profile laid over its top level. A profile the file lacks is
// looked up among the built-in ones and laid over the file's top level
// the same way; one that exists in neither is an error.
func Resolve(path, profile string) (Policy, error) {
	if path == "" {
		if profile == "" {
			return Policy{}, nil
		}
		if p, ok := BuiltIn(profile); ok {
			return p, nil
		}
		return Policy{}, fmt.Errorf("%w: no profile %q (built in: claude, codex, gemini; or name a file with --policy)", ErrInvalid, profile)
	}
	data, err := read(path)
	if err != nil {
		return Policy{}, err
	}
	d, err := parse(path, data)
	if err != nil {
		return Policy{}, err
	}
	if _, ok := d.profiles[profile]; ok || profile == "" {
		return d.with(path, profile)
	}
	b, ok := BuiltIn(profile)
	if !ok {
		return Policy{}, fmt.Errorf("%w: %s: no [profile.%s] (it has: %s; built in: claude, codex, gemini)", ErrInvalid, path, profile, names(d.profiles))
	}
	top, _ := d.with(path, "")
	merged := map[string]Setting{}
	for _, s := range top.Settings {
		merged[s.Key] = s
	}
	for _, s := range b.Settings {
		merged[s.Key] = s
	}
	var p Policy
	for _, k := range sortedKeys(merged) {
		p.Settings = append(p.Settings, merged[k])
	}
	return p, nil
}
