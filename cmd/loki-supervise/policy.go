package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/egress"
	"github.com/loki-sh/loki/internal/session/peerenv"
	"github.com/loki-sh/loki/internal/session/policyfile"
)

// settingCheck parses one setting's value with the code its flag's value
// goes through, so a bad value in a file is refused naming the file and
// line rather than later as if typed.
var settingCheck = map[string]func(v string) error{
	"isolation": func(v string) error {
		switch v {
		case "namespace", "oci", "docker", "none":
			return nil
		}
		return fmt.Errorf("%q: want namespace, oci, docker or none", v)
	},
	"fs":         func(v string) error { _, err := confine.ParseFS(v); return err },
	"network":    func(v string) error { _, err := confine.ParseNetwork(v); return err },
	"user":       func(v string) error { _, err := confine.ParseUser(v); return err },
	"userns":     func(v string) error { _, err := confine.ParseUserNS(v); return err },
	"pids-max":   func(v string) error { _, err := confine.ParsePidsMax(v); return err },
	"memory-max": func(v string) error { _, err := confine.ParseMemoryMax(v); return err },
	"cpu-max":    func(v string) error { _, err := confine.ParseCPUMax(v); return err },
	"allow-host": func(v string) error { _, err := egress.Parse([]string{v}); return err },
	"env":        func(v string) error { _, err := peerenv.ParseRule(v); return err },
	"write":      func(string) error { return nil }, // checked with the flags' paths, which must exist
	"hide":       func(string) error { return nil },
}

// applyPolicyFile finds and reads the session's policy file and hands
// each setting to its flag, unless the flag was given on the command line
// (or by its environment variable). It returns where each setting came
// from, for --print-policy.
func applyPolicyFile(c *cli.Context, workspace string) ([]confine.Setting, error) {
	sources := map[string]string{}
	given := givenFlags(c)
	path := c.String("policy")
	if path == "" && !c.Bool("no-policy") {
		cfg, _ := os.UserConfigDir()
		path = policyfile.Find(workspace, cfg)
	}
	if path != "" && c.Bool("no-policy") {
		return nil, usage("session: --policy with --no-policy: pick one")
	}
	pol, err := policyfile.Resolve(path, c.String("profile"))
	if err != nil {
		return nil, usage("session: %v", err)
	}
	// The workspace's own file came with the project (or was left there
	// by an earlier agent): it may narrow the session, never widen it.
	// Whatever widens is the user's to say, on the command line or in
	// their own config dir.
	fromWorkspace := c.String("policy") == "" && path != "" && strings.HasPrefix(path, filepath.Join(workspace, ".loki")+string(filepath.Separator))
	home, _ := os.UserHomeDir()
	for _, s := range pol.Settings {
		if given[s.Key] {
			sources[s.Key] = "command line (over " + s.Source.String() + ")"
			continue
		}
		check := settingCheck[s.Key]
		for _, v := range s.Values {
			if check == nil {
				return nil, usage("session: %s: %s: this setting has no flag here", s.Source, s.Key)
			}
			if err := check(v); err != nil {
				return nil, usage("session: %s: %s: %v", s.Source, s.Key, err)
			}
			if (s.Key == "write" || s.Key == "hide") && home != "" && (v == "~" || strings.HasPrefix(v, "~/")) {
				v = filepath.Join(home, strings.TrimPrefix(v, "~"))
			}
			if s.Key == "hide" && !exists(v, workspace) {
				continue // a file's hide list may name what only some machines have
			}
			if fromWorkspace && s.Source.File != "" {
				if why := widens(s.Key, v, workspace); why != "" {
					return nil, usage("session: %s: %s: a workspace's policy file cannot %s; say it on the command line or in %s",
						s.Source, s.Key, why, filepath.Join("~/.config/loki", "policy.toml"))
				}
			}
			if err := c.Set(s.Key, v); err != nil {
				return nil, usage("session: %s: %s: %v", s.Source, s.Key, err)
			}
		}
		sources[s.Key] = s.Source.String()
	}
	return settingsOf(c, sources, given), nil
}

// givenFlags are the command's flags given on its command line (or in
// their environment variables), by their first name, read in one pass:
// urfave's IsSet looks an unset flag up through every flag's names, a
// regexp each, about 10 us a call for the session command.
func givenFlags(c *cli.Context) map[string]bool {
	used := map[string]bool{}
	for _, n := range c.LocalFlagNames() {
		used[n] = true
	}
	given := map[string]bool{}
	if c.Command == nil {
		return given
	}
	for _, f := range c.Command.Flags {
		names := f.Names()
		for _, n := range names {
			if used[n] {
				given[names[0]] = true
				break
			}
		}
	}
	return given
}

// settingsOf lists the settings with an origin, in key order, with the
// values the flags now hold.
func settingsOf(c *cli.Context, sources map[string]string, given map[string]bool) []confine.Setting {
	for k := range policyfile.Keys {
		if _, ok := sources[k]; !ok && given[k] {
			sources[k] = "command line"
		}
	}
	var keys []string
	for k := range sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []confine.Setting
	for _, k := range keys {
		var v []string
		switch x := c.Generic(k).(type) {
		case *repeated:
			v = append(v, *x...)
		default:
			v = []string{c.String(k)}
		}
		out = append(out, confine.Setting{Name: k, Value: v, From: sources[k]})
	}
	return out
}

// policyWorkspace is where the default search looks for .loki/policy.toml:
// the session's --cwd when it is a host directory, else the current one.
func policyWorkspace(c *cli.Context) string {
	if d := c.String("cwd"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			if st, err := os.Stat(abs); err == nil && st.IsDir() {
				return abs
			}
		}
	}
	wd, _ := os.Getwd()
	return wd
}

// widens says how setting key to v would give the agent more than the
// default session, or "" when it does not.
func widens(key, v, workspace string) string {
	switch key {
	case "env":
		return "pass variables from your environment to the agent"
	case "user", "userns", "isolation":
		return "choose the agent's user or isolation"
	case "fs":
		if v != string(confine.FSConfined) {
			return "widen the filesystem"
		}
	case "pids-max":
		if v == "0" || v == "max" {
			return "lift the pids limit"
		}
	case "write":
		p := v
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, p)
		}
		p = filepath.Clean(p)
		if p != workspace && !strings.HasPrefix(p, workspace+string(filepath.Separator)) {
			return "make a path outside the workspace writable"
		}
	}
	return ""
}

func exists(p, workspace string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	_, err := os.Lstat(p)
	return err == nil
}
