//go:build unix

package lineage

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// The exec gate is this very binary, re-executed with gateEnv set. The value
// carries a per-spawn nonce that the parent must echo on the release pipe, so
// an inherited or forged variable alone never turns a process into a gate.
const (
	gateEnv     = "LOKI_LINEAGE_GATE"
	gateVersion = "1:"
	gateArg0    = "loki-lineage-gate"
	releaseFD   = 3 // the gate reads the release message here
	statusFD    = 4 // the gate writes an errno here if exec fails
	rulesetFD   = 5 // a Landlock ruleset to enforce, when the release says so
	// restrictFailed marks a status errno that came from enforcing the
	// ruleset, not from the exec.
	restrictFailed = 1 << 31
	// TokenEnv names the per-run lineage token every member inherits.
	TokenEnv = "LOKI_DEADLINE_LINEAGE"
)

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// childEnv returns env without any variable we set ourselves, then ours.
func childEnv(env []string, token, nonce string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if strings.HasPrefix(kv, TokenEnv+"=") || strings.HasPrefix(kv, gateEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, TokenEnv+"="+token, gateEnv+"="+gateVersion+nonce)
}

// releaseMessage is what the parent writes to let the gate exec. It says
// whether the gate must first enforce the ruleset at rulesetFD: the gate
// learns it from its parent, never from anything the runner's environment
// could carry, so a ruleset that was asked for is never skipped.
func releaseMessage(nonce string, restrict bool) []byte {
	flag := "-"
	if restrict {
		flag = "L"
	}
	return []byte("exec:" + nonce + ":" + flag + "\n")
}

// validNonce accepts exactly 32 lower-case hex digits.
func validNonce(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
