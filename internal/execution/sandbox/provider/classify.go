//go:build unix

package provider

import (
	"encoding/json"
	"strings"

	"github.com/loki-sh/loki/internal/pycompat"
)

// Classifications, as the reference names them (a dashboard reads them).
const (
	Available                    = "available"
	SeatbeltNotEnabled           = "seatbelt_not_enabled"
	AuthProbeUnsupported         = "provider_auth_probe_unsupported"
	ReadinessProbeUnsupported    = "provider_readiness_probe_unsupported"
	AuthConfinementUnavailable   = "provider_auth_confinement_unavailable"
	AuthProbeTimeout             = "provider_auth_probe_timeout"
	ReadinessProbeTimeout        = "provider_readiness_probe_timeout"
	CLIUnavailable               = "provider_cli_unavailable"
	AuthStatusInvalid            = "provider_auth_status_invalid"
	AuthUnavailableInConfinement = "provider_auth_unavailable_in_confinement"
	LiveInferenceUnavailable     = "provider_live_inference_unavailable"
)

const (
	claude        = "claude" // the one provider whose output is parsed
	defaultAction = "Authenticate the selected provider, then retry."
)

// authCommands check login state without side effects.
var authCommands = map[string][]string{
	"claude": {"claude", "auth", "status"},
	"codex":  {"codex", "login", "status"},
	"cline":  {"cline", "auth", "status"},
}

// readinessCommands make one real, cheap request that must use a tool, so
// a pass shows inference and tool execution both work in the sandbox.
var readinessCommands = map[string][]string{
	"claude": {
		"claude", "--dangerously-skip-permissions", "--model", "haiku",
		"--setting-sources", "", "--disallowedTools", "Task", "--tools", "Bash",
		"--effort", "low", "-p",
		"Use the Bash tool to run printf ready. After it succeeds, reply with exactly OK.",
		"--output-format", "json",
	},
}

// actions tell the user how to fix an unavailable provider.
var actions = map[string]string{
	"claude": "Run 'claude login', unlock the macOS login keychain, then retry.",
	"codex":  "Run 'codex login', then retry.",
	"cline":  "Run 'cline auth', then retry.",
	"aider":  "Configure a provider with a non-interactive auth status command.",
}

// Action returns the remedy shown with a result for provider.
func Action(provider string) string {
	if a, ok := actions[provider]; ok {
		return a
	}
	return defaultAction
}

// outcome is what a finished CLI run left for classification.
type outcome struct {
	code   int
	stdout []byte
}

// classifyAuth judges an auth-status run. For claude the JSON must say
// loggedIn: true (exactly true) and the exit must be 0; unparseable output
// is its own class. Other CLIs are judged by their exit code alone.
func classifyAuth(provider string, o outcome) (bool, string) {
	if provider != claude {
		if o.code == 0 {
			return true, Available
		}
		return false, AuthUnavailableInConfinement
	}
	obj, ok := jsonObject(o.stdout)
	if !ok {
		return false, AuthStatusInvalid
	}
	if o.code == 0 && obj["loggedIn"] == true {
		return true, Available
	}
	return false, AuthUnavailableInConfinement
}

// readinessPassed accepts only a successful, non-error answer of "OK"
// (surrounding blanks and trailing dots aside).
func readinessPassed(provider string, o outcome) bool {
	if o.code != 0 {
		return false
	}
	if provider != claude {
		return true
	}
	obj, ok := jsonObject(o.stdout)
	if !ok {
		return false
	}
	answer, _ := obj["result"].(string)
	answer = strings.TrimRight(pycompat.Strip(answer), ".")
	return obj["is_error"] == false && answer == "OK"
}

// jsonObject parses stdout as one JSON object. A top-level value of any
// other type is treated as unparseable: the reference cannot judge it
// either.
func jsonObject(b []byte) (map[string]any, bool) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	return obj, ok
}
