package confine

import "fmt"

// rule is one check across flags: it returns the sentence a user reads
// (what to drop or say instead), "" when p passes.
type rule func(p Policy) string

// rules are every cross-flag check of a policy, after runc's
// libcontainer/configs/validate: one small function each, so a new knob
// adds its own. What a backend cannot give is not checked here
// (session.Admit does that against the backend's capabilities).
var rules = []rule{
	userWithPrivateUserNS,
	writeWithHostFS,
	allowHostWithNetwork,
}

// Validate checks the flags of p against each other. Its error wraps
// ErrPolicy (a usage error: exit 2) and is one line.
func (p Policy) Validate() error {
	for _, r := range rules {
		if msg := r(p); msg != "" {
			return fmt.Errorf("%w: %s", ErrPolicy, msg)
		}
	}
	return nil
}

func userWithPrivateUserNS(p Policy) string {
	if p.User != nil && p.UserNS == UserNSPrivate {
		return "--user with --userns private: pick one (--user already runs the agent unprivileged)"
	}
	return ""
}

func writeWithHostFS(p Policy) string {
	if p.FS == FSHost && len(p.Write) > 0 {
		return "--write: with --fs host everything the agent's uid may write is writable already"
	}
	return ""
}

func allowHostWithNetwork(p Policy) string {
	if len(p.Allow) > 0 && p.Network != NetworkLoopback {
		return fmt.Sprintf("--allow-host gives the agent a network of its own whose only way out is the proxy; drop --network %s (or say loopback)", p.Net())
	}
	return ""
}
