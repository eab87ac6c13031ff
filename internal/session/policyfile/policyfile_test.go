package policyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const sample = `# a project's policy
fs = "confined"
write = ["build", "~/.cache/x"]
hide = ["~/.ssh"]
pids-max = 512
memory-max = "2G"
cpu-max = 1.5

[profile.offline]
network = "none"
write = []
`

func TestLoad(t *testing.T) {
	p := write(t, sample)
	cases := []struct {
		name, profile string
		want          map[string]string // key -> values joined by ",", then "@line"
	}{
		{"top level", "", map[string]string{
			"fs": "confined@2", "write": "build,~/.cache/x@3", "hide": "~/.ssh@4",
			"pids-max": "512@5", "memory-max": "2G@6", "cpu-max": "1.5@7",
		}},
		{"a profile replaces its keys", "offline", map[string]string{
			"fs": "confined@2", "write": "@11", "hide": "~/.ssh@4", "network": "none@10",
			"pids-max": "512@5", "memory-max": "2G@6", "cpu-max": "1.5@7",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol, err := Load(p, tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range pol.Settings {
				got[s.Key] = strings.Join(s.Values, ",") + "@" + itoa(s.Source.Line)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// Every refusal names the file, the line and the key.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, body, profile, want string
	}{
		{"unknown key", "fs = \"host\"\nwirte = [\"x\"]\n", "", `:2: unknown key "wirte"`},
		{"dotted key", "limits.pids = 3\n", "", `:1: unknown key "limits.pids"`},
		{"wrong type for a list", "write = \"x\"\n", "", `:1: write: want an array of strings`},
		{"non-string in a list", "hide = [\"a\", 3]\n", "", `:1: hide: want an array of strings; Integer is not a string`},
		{"wrong type for a scalar", "network = [\"none\"]\n", "", `:1: network: want a string`},
		{"unknown table", "[limits]\npids-max = 3\n", "", `:1: unknown table [limits]`},
		{"unknown key in a profile", "[profile.a]\nnetwrok = \"none\"\n", "a", `:2 [profile.a]: unknown key "netwrok"`},
		{"not TOML", "fs = \n", "", `:1: `},
		{"duplicate key", "fs = \"host\"\nfs = \"confined\"\n", "", `:2: `},
		{"missing profile", "fs = \"host\"\n", "nope", `no [profile.nope] (it has: no profiles; built in: claude, codex, gemini)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body)
			_, err := Resolve(p, tc.profile)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err %v, want ErrInvalid naming %s and %q", err, p, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("more than one line: %q", err)
			}
		})
	}
}

func TestBuiltInProfiles(t *testing.T) {
	for _, name := range []string{"claude", "codex", "gemini"} {
		p, ok := BuiltIn(name)
		env, has := p.Get("env")
		if !ok || !has || len(env.Values) == 0 || env.Source.String() != "built-in profile "+name {
			t.Errorf("%s: %+v %v", name, p, ok)
		}
	}
	if _, ok := BuiltIn("nope"); ok {
		t.Error("a profile that does not exist")
	}
	// A file without [profile.claude] gets the built-in one over its top level.
	p := write(t, "fs = \"confined\"\n")
	pol, err := Resolve(p, "claude")
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := pol.Get("fs")
	env, _ := pol.Get("env")
	if fs.Values[0] != "confined" || !strings.Contains(strings.Join(env.Values, " "), "ANTHROPIC_API_KEY") {
		t.Fatalf("%+v", pol)
	}
}

func TestFind(t *testing.T) {
	ws, cfg := t.TempDir(), t.TempDir()
	if got := Find(ws, cfg); got != "" {
		t.Fatalf("Find in empty dirs = %q", got)
	}
	user := filepath.Join(cfg, "loki", "policy.toml")
	os.MkdirAll(filepath.Dir(user), 0o700)
	os.WriteFile(user, nil, 0o600)
	if got := Find(ws, cfg); got != user {
		t.Fatalf("Find = %q, want the user's %q", got, user)
	}
	proj := filepath.Join(ws, ".loki", "policy.toml")
	os.MkdirAll(filepath.Dir(proj), 0o700)
	os.WriteFile(proj, nil, 0o600)
	if got := Find(ws, cfg); got != proj {
		t.Fatalf("Find = %q, want the workspace's %q", got, proj)
	}
}

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	if _, err := Resolve(t.TempDir(), ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a directory: %v", err)
	}
	big := write(t, "fs = \"host\"\n"+strings.Repeat("#", MaxSize))
	if _, err := Resolve(big, ""); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a large file: %v", err)
	}
}
