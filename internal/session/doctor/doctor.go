package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/loki-sh/loki/internal/session/confine"
)

// Check is one item: whether it is available, what was seen, and the
// fix when it is not.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Needed: the default session cannot run without it.
	Needed bool `json:"needed,omitempty"`
}

// Report is what Run found.
type Report struct {
	UID int `json:"uid"`
	// DefaultSession: every Needed check passed.
	DefaultSession bool `json:"default_session"`
	// CgroupVersion is v1, v2, hybrid or none.
	CgroupVersion string `json:"cgroup_version"`
	// LandlockABI is the kernel's Landlock ABI version, 0 when none.
	LandlockABI int     `json:"landlock_abi"`
	Checks      []Check `json:"checks"`
	// Isolation is each backend's declared capabilities on this host:
	// the knobs a session there is refused, with the alternative (the
	// same values session.Admit refuses by).
	Isolation []Isolation `json:"isolation"`
	// Policy is the filesystem policy a default session started from
	// here would get (session --print-policy).
	Policy *confine.View `json:"policy,omitempty"`
}

// Isolation is one backend's refusals, in the order Admit looks for them.
type Isolation struct {
	Name    string    `json:"name"`
	Refuses []Refusal `json:"refuses"`
	// Syscalls names the syscall policy its peer runs under ("none":
	// none's).
	Syscalls string `json:"syscalls"`
	// Reports are the refusal kinds a session there writes to its
	// status stream (docs/status.md): egress, pids, memory, ...
	Reports []string `json:"reports"`
}

// Refusal is a knob (the flag) a backend does not give, and what to do
// instead.
type Refusal struct {
	Knob string `json:"knob"`
	Fix  string `json:"fix"`
}

// add appends c and keeps DefaultSession up to date.
func (r *Report) add(c Check) {
	if !c.OK {
		if c.Needed {
			r.DefaultSession = false
		}
	} else {
		c.Fix = ""
	}
	r.Checks = append(r.Checks, c)
}

// Set puts c in place of the check of the same name (appending it when
// there is none) and recomputes DefaultSession: a check that ran the
// real thing replaces one that only looked.
func (r *Report) Set(c Check) {
	if c.OK {
		c.Fix = ""
	}
	replaced := false
	for i := range r.Checks {
		if r.Checks[i].Name == c.Name {
			r.Checks[i], replaced = c, true
		}
	}
	if !replaced {
		r.Checks = append(r.Checks, c)
	}
	r.DefaultSession = true
	for _, k := range r.Checks {
		if k.Needed && !k.OK {
			r.DefaultSession = false
		}
	}
}

// Text writes the report for a person: one line per check, and the fix
// under an unavailable one.
func (r Report) Text(w io.Writer) {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "no  "
			if c.Needed {
				mark = "FAIL"
			}
		}
		fmt.Fprintf(w, "%s  %-*s  %s\n", mark, width, c.Name, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "      %s  fix: %s\n", strings.Repeat(" ", width), c.Fix)
		}
	}
	for _, b := range r.Isolation {
		refused := make([]string, 0, len(b.Refuses))
		for _, r := range b.Refuses {
			refused = append(refused, r.Knob)
		}
		gives := "every confinement knob"
		if len(refused) > 0 {
			gives = "all but " + strings.Join(refused, ", ")
		}
		filter := "under the session's syscall policy"
		if b.Syscalls == "none" {
			filter = "with no syscall policy"
		}
		reports := "no refusals"
		if len(b.Reports) > 0 {
			reports = "refused " + strings.Join(b.Reports, ", ")
		}
		fmt.Fprintf(w, "--isolation %s gives %s, %s; its status stream reports %s\n", b.Name, gives, filter, reports)
	}
	if r.DefaultSession {
		fmt.Fprintln(w, "the default session (loki-supervise session -- CMD) can run here")
	} else {
		fmt.Fprintln(w, "the default session cannot run here: see FAIL above")
	}
	if r.Policy != nil {
		fmt.Fprintln(w, "\nwhat a session started here gives the agent (session --print-policy):")
		r.Policy.Text(w)
	}
}
