package runnerenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/loki-sh/loki/internal/safefile"
)

// DefaultPath is the runner's PATH when LOKI_HOST_CHILD_PATH is unset.
const DefaultPath = "/usr/bin:/bin:/usr/sbin:/sbin"

// passThrough lists the only supervisor variables a runner may inherit.
// They are settings, not credentials; adding a name here is a security
// decision.
var passThrough = []string{
	// general runtime settings
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
	"DISABLE_AUTOUPDATER",
	"DISABLE_TELEMETRY",
	"HOME",
	"LANG",
	"LC_ALL",
	"LC_CTYPE",
	"LOGNAME",
	"NO_COLOR",
	"SHELL",
	"TERM",
	"USER",
	// loki tuning knobs understood by run.sh
	"LOKI_ADVISOR_MODEL",
	"LOKI_APP_RUNNER",
	"LOKI_AUTONOMY_OVERRIDE",
	"LOKI_BUILD_PROFILE",
	"LOKI_CLAUDE_EFFORT",
	"LOKI_CLAUDE_MODEL_DEVELOPMENT",
	"LOKI_CLAUDE_MODEL_FAST",
	"LOKI_CLAUDE_MODEL_PLANNING",
	"LOKI_CLAUDE_TASK_BUDGET",
	"LOKI_CODEX_MODEL",
	"LOKI_CODEX_REASONING_EFFORT",
	"LOKI_CODEX_WEB_SEARCH",
	"LOKI_COMPLEXITY",
	"LOKI_COUNCIL_ENABLED",
	"LOKI_COUNCIL_SIZE",
	"LOKI_COUNCIL_TIMEOUT_MS",
	"LOKI_ENTERPRISE_AUTH",
	"LOKI_FIRST_PASS_EXCELLENCE",
	"LOKI_GEMINI_MODEL",
	"LOKI_HOST_GUARD",
	"LOKI_HOST_GUARD_SETTINGS_JSON",
	"LOKI_LEGACY_BASH",
	"LOKI_MAX_ITERATIONS",
	"LOKI_NO_SESSION_PERSIST",
	"LOKI_PARTIAL_MESSAGES",
	"LOKI_PROMPT_INJECTION",
	"LOKI_SDK_LOOP",
	"LOKI_SDK_MODE",
	"LOKI_SESSION_MODEL",
	"LOKI_SETTING_SOURCES",
	"LOKI_SKILL_DIR",
	"LOKI_SPEC_SHA256",
	"LOKI_SPEC_CONTRADICTION_FASTFAIL",
	"LOKI_WORKSPACE_ROOTS",
}

// Allowed reports whether a supervisor variable of this name may pass.
func Allowed(name string) bool {
	for _, n := range passThrough {
		if n == name {
			return true
		}
	}
	return false
}

// runtimeDirs are created under <loki-dir>/host-runtime, each 0700.
var runtimeDirs = []string{"tmp", "cache", "config", "data", "state", "npm", "bun", "claude"}

// gitConfig disables commit signing: a runner has no access to the user's
// signing agent, and a hanging pinentry would stall the build.
const gitConfig = "[commit]\n\tgpgsign = false\n"

// Build returns the runner environment for a build in workspace whose loki
// state lives in lokiDir (both should be absolute, resolved paths). It
// creates the private runtime directories and the gitconfig.
func Build(workspace, lokiDir string) (map[string]string, error) {
	return BuildFrom(os.LookupEnv, workspace, lokiDir)
}

// BuildFrom is Build with the supervisor environment supplied by lookup.
func BuildFrom(lookup func(string) (string, bool), workspace, lokiDir string) (map[string]string, error) {
	env := make(map[string]string, len(passThrough)+24)
	for _, name := range passThrough {
		if v, ok := lookup(name); ok {
			env[name] = v
		}
	}
	env["PATH"] = DefaultPath
	if v, ok := lookup("LOKI_HOST_CHILD_PATH"); ok {
		env["PATH"] = v
	}
	env["LOKI_OWN_SESSION"] = "1"
	env["LOKI_TARGET_DIR"] = workspace
	env["LOKI_DIR"] = lokiDir
	env["LOKI_NO_SESSION_PERSIST"] = "1"
	env["LOKI_SUPERVISED_BUILD"] = "1"
	// Durable jobs make run.sh report policy and iteration-limit failures
	// as exit 20 instead of a success-looking 0.
	env["LOKI_DURABLE_STATE"] = "1"
	env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
	env["DISABLE_AUTOUPDATER"] = "1"
	env["DISABLE_TELEMETRY"] = "1"

	root := filepath.Join(lokiDir, "host-runtime")
	for _, name := range runtimeDirs {
		if err := os.MkdirAll(filepath.Join(root, name), 0o700); err != nil {
			return nil, fmt.Errorf("runnerenv: runtime dir %s: %w", name, err)
		}
	}
	env["TMPDIR"] = filepath.Join(root, "tmp")
	env["XDG_CACHE_HOME"] = filepath.Join(root, "cache")
	env["XDG_CONFIG_HOME"] = filepath.Join(root, "config")
	env["XDG_DATA_HOME"] = filepath.Join(root, "data")
	env["XDG_STATE_HOME"] = filepath.Join(root, "state")
	env["npm_config_cache"] = filepath.Join(root, "npm")
	env["BUN_INSTALL_CACHE_DIR"] = filepath.Join(root, "bun")

	gc := filepath.Join(root, "gitconfig")
	if err := safefile.WriteAtomic(gc, []byte(gitConfig), 0o600); err != nil {
		return nil, fmt.Errorf("runnerenv: gitconfig: %w", err)
	}
	env["GIT_CONFIG_GLOBAL"] = gc
	env["GIT_CONFIG_NOSYSTEM"] = "1"
	return env, nil
}

// List returns m as sorted KEY=VALUE strings, the form exec wants.
func List(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
