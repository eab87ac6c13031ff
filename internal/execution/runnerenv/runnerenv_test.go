package runnerenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestBuildAllowlistAndForcedValues(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	loki := filepath.Join(dir, "loki")
	host := map[string]string{
		"HOME":                  "/home/u",
		"LANG":                  "C.UTF-8",
		"LOKI_CODEX_MODEL":      "m1",
		"ANTHROPIC_API_KEY":     "sk-secret",
		"GITHUB_TOKEN":          "ghp-secret",
		"AWS_SECRET_ACCESS_KEY": "aws",
		"LD_PRELOAD":            "/evil.so",
		"PATH":                  "/host/bin",
		"TMPDIR":                "/host/tmp",
		"DISABLE_TELEMETRY":     "0",
		"LOKI_DURABLE_STATE":    "0",
		"LOKI_HOST_CHILD_PATH":  "/opt/x/bin:/usr/bin",
		"GIT_CONFIG_GLOBAL":     "/home/u/.gitconfig",
	}
	env, err := BuildFrom(fakeEnv(host), ws, loki)
	if err != nil {
		t.Fatal(err)
	}
	rt := filepath.Join(loki, "host-runtime")
	want := map[string]string{
		"HOME":                    "/home/u",
		"LANG":                    "C.UTF-8",
		"LOKI_CODEX_MODEL":        "m1",
		"PATH":                    "/opt/x/bin:/usr/bin",
		"LOKI_OWN_SESSION":        "1",
		"LOKI_TARGET_DIR":         ws,
		"LOKI_DIR":                loki,
		"LOKI_NO_SESSION_PERSIST": "1",
		"LOKI_SUPERVISED_BUILD":   "1",
		"LOKI_DURABLE_STATE":      "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"TMPDIR":                                   filepath.Join(rt, "tmp"),
		"XDG_CACHE_HOME":                           filepath.Join(rt, "cache"),
		"XDG_CONFIG_HOME":                          filepath.Join(rt, "config"),
		"XDG_DATA_HOME":                            filepath.Join(rt, "data"),
		"XDG_STATE_HOME":                           filepath.Join(rt, "state"),
		"npm_config_cache":                         filepath.Join(rt, "npm"),
		"BUN_INSTALL_CACHE_DIR":                    filepath.Join(rt, "bun"),
		"GIT_CONFIG_GLOBAL":                        filepath.Join(rt, "gitconfig"),
		"GIT_CONFIG_NOSYSTEM":                      "1",
	}
	if len(env) != len(want) {
		t.Errorf("got %d variables, want %d: %v", len(env), len(want), List(env))
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, secret := range []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD", "LOKI_HOST_CHILD_PATH"} {
		if _, ok := env[secret]; ok {
			t.Errorf("%s leaked into the runner environment", secret)
		}
	}
	for _, kv := range List(env) {
		if strings.Contains(kv, "secret") {
			t.Errorf("secret value leaked: %s", kv)
		}
	}
}

func TestBuildDefaultPathAndRuntimeFiles(t *testing.T) {
	loki := t.TempDir()
	env, err := BuildFrom(fakeEnv(nil), "/ws", loki)
	if err != nil {
		t.Fatal(err)
	}
	if env["PATH"] != DefaultPath {
		t.Errorf("PATH = %q, want %q", env["PATH"], DefaultPath)
	}
	for _, d := range runtimeDirs {
		fi, err := os.Stat(filepath.Join(loki, "host-runtime", d))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want dir 0700", d, fi.Mode())
		}
	}
	gc := env["GIT_CONFIG_GLOBAL"]
	b, err := os.ReadFile(gc)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[commit]\n\tgpgsign = false\n" {
		t.Errorf("gitconfig = %q", b)
	}
	if fi, _ := os.Stat(gc); fi.Mode().Perm() != 0o600 {
		t.Errorf("gitconfig mode %v, want 0600", fi.Mode().Perm())
	}
	// A second build over the same dirs is idempotent.
	if _, err := BuildFrom(fakeEnv(nil), "/ws", loki); err != nil {
		t.Fatalf("second build: %v", err)
	}
}

func TestList(t *testing.T) {
	got := List(map[string]string{"B": "2", "A": "1=x", "C": ""})
	want := []string{"A=1=x", "B=2", "C="}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("List = %q, want %q", got, want)
	}
}

func TestAllowed(t *testing.T) {
	for name, want := range map[string]bool{"HOME": true, "LOKI_SKILL_DIR": true, "OPENAI_API_KEY": false, "PATH": false, "home": false} {
		if Allowed(name) != want {
			t.Errorf("Allowed(%q) = %v", name, !want)
		}
	}
}
