package doctor

import (
	"bytes"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	r := Report{DefaultSession: true}
	r.add(Check{Name: "a", OK: true, Fix: "dropped when ok"})
	r.add(Check{Name: "optional", OK: false, Fix: "install it"})
	if !r.DefaultSession || r.Checks[0].Fix != "" {
		t.Fatalf("an optional miss failed the report: %+v", r)
	}
	var b bytes.Buffer
	r.Text(&b)
	if !strings.Contains(b.String(), "no    optional") || !strings.Contains(b.String(), "fix: install it") || !strings.Contains(b.String(), "can run here") {
		t.Errorf("text:\n%s", b.String())
	}
	r.add(Check{Name: "needed", Needed: true, Detail: "refused", Fix: "be root"})
	b.Reset()
	r.Text(&b)
	if r.DefaultSession || !strings.Contains(b.String(), "FAIL  needed") || !strings.Contains(b.String(), "cannot run here") {
		t.Errorf("a needed miss did not fail the report: %v\n%s", r.DefaultSession, b.String())
	}
}

// TestIsolationText: each backend's refusals are one line, in knob order,
// with whether its peer runs under the syscall policy.
func TestIsolationText(t *testing.T) {
	r := Report{Isolation: []Isolation{{Name: "a", Refuses: []Refusal{}, Syscalls: "p", Reports: []string{"egress", "pids"}}, {Name: "b", Refuses: []Refusal{{Knob: "--user", Fix: "f"}, {Knob: "--fs host", Fix: "g"}}, Syscalls: "none"}}}
	var b bytes.Buffer
	r.Text(&b)
	for _, want := range []string{"--isolation a gives every confinement knob, under the session's syscall policy; its status stream reports refused egress, pids\n", "--isolation b gives all but --user, --fs host, with no syscall policy; its status stream reports no refusals\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSet: a check that ran the real thing replaces one that only looked,
// and a needed one that failed makes the default session impossible.
func TestSet(t *testing.T) {
	r := Report{DefaultSession: true}
	r.add(Check{Name: "crun", OK: true, Detail: "found"})
	r.Set(Check{Name: "crun", OK: false, Detail: "session exited 127", Fix: "f"})
	r.Set(Check{Name: "default session here", OK: false, Needed: true, Fix: "g"})
	if len(r.Checks) != 2 || r.Checks[0].OK || r.Checks[0].Detail != "session exited 127" || r.DefaultSession {
		t.Fatalf("%+v", r)
	}
	r.Set(Check{Name: "default session here", OK: true, Needed: true, Fix: "g"})
	if !r.DefaultSession || r.Checks[1].Fix != "" {
		t.Fatalf("%+v", r)
	}
}
