package confine

import (
	"bytes"
	"strings"
	"testing"
)

// TestViewSyscalls: the refused syscalls are one line per reason, with
// the errno; a view without them prints no such section.
func TestViewSyscalls(t *testing.T) {
	v := View{Backend: "namespace", FS: FSConfined, Syscalls: []SyscallRule{
		{Calls: []string{"chmod", "fchmod"}, Errno: "EPERM", Why: "set-uid"},
		{Calls: []string{"openat2"}, Errno: "ENOSYS", Why: "struct"},
	}}
	var b bytes.Buffer
	v.Text(&b)
	for _, want := range []string{"syscalls refused:\n", "chmod fchmod", "EPERM: set-uid\n", "ENOSYS: struct\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	View{Backend: "none", FS: FSHost}.Text(&b)
	if strings.Contains(b.String(), "syscalls") {
		t.Errorf("a view without a policy:\n%s", b.String())
	}
}
