package confine

import (
	"fmt"
	"io"
	"strings"
)

// View is a session's effective filesystem policy as a user reads it
// (session --print-policy, doctor): every path the policy names, and
// why it is there.
type View struct {
	Backend string `json:"backend"`
	FS      FS     `json:"fs"`
	// Agents are the known agents the command names (agentfs).
	Agents   []string   `json:"agents"`
	Writable []PathRule `json:"writable"`
	ReadOnly []PathRule `json:"read_only"`
	Hidden   []PathRule `json:"hidden"`
	// Syscalls are the calls the session's syscall policy refuses the
	// peer (package session/seccomp), empty where the backend has none.
	Syscalls []SyscallRule `json:"syscalls"`
	// Notes are what the policy does not cover, one line each.
	Notes []string `json:"notes,omitempty"`
	// Settings say where each setting that is not a default came from:
	// the command line, a policy file's line, a profile.
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is one session setting and its origin.
type Setting struct {
	Name  string   `json:"name"`
	Value []string `json:"value"`
	From  string   `json:"from"`
}

// SyscallRule is one line of a View's syscalls: calls refused with one
// errno, for one reason.
type SyscallRule struct {
	Calls []string `json:"calls"`
	Errno string   `json:"errno"`
	Why   string   `json:"why"`
}

// PathRule is one path of a View.
type PathRule struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Create: missing on the host; the session makes it at start.
	Create bool `json:"create,omitempty"`
	// Uncovered: a protected path that is missing and cannot be
	// covered by a placeholder: the agent could create it.
	Uncovered bool `json:"uncovered,omitempty"`
}

// Text writes v for a person, one path a line.
func (v View) Text(w io.Writer) {
	fmt.Fprintf(w, "backend %s, filesystem %s", v.Backend, v.FS)
	if len(v.Agents) > 0 {
		fmt.Fprintf(w, ", agents named: %s", strings.Join(v.Agents, ", "))
	}
	fmt.Fprintln(w)
	for _, s := range []struct {
		title string
		rules []PathRule
	}{{"writable", v.Writable}, {"read-only", v.ReadOnly}, {"hidden", v.Hidden}} {
		fmt.Fprintf(w, "%s:\n", s.title)
		for _, r := range s.rules {
			note := ""
			switch {
			case r.Create:
				note = " (missing: made at start)"
			case r.Uncovered:
				note = " (missing: NOT covered, the agent could create it)"
			}
			fmt.Fprintf(w, "  %-40s %s%s\n", r.Path, r.Why, note)
		}
	}
	if len(v.Syscalls) > 0 {
		fmt.Fprintln(w, "syscalls refused:")
	}
	for _, r := range v.Syscalls {
		fmt.Fprintf(w, "  %-40s %s: %s\n", strings.Join(r.Calls, " "), r.Errno, r.Why)
	}
	if len(v.Settings) > 0 {
		fmt.Fprintln(w, "settings:")
	}
	for _, st := range v.Settings {
		fmt.Fprintf(w, "  %-12s %-28s %s\n", st.Name, strings.Join(st.Value, " "), st.From)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
