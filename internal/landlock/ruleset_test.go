package landlock

import (
	"errors"
	"strings"
	"testing"
)

// TestCheck: a ruleset its ABI cannot express is ErrUnavailable; a rule
// granting what the ruleset does not handle is refused (the kernel would
// answer EINVAL).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rs    Ruleset
		unav  bool
		error string
	}{
		{"ABI 7 whole", Ruleset{ABI: 7, HandledFS: HandledFS(7), HandledNet: HandledNet(7), Scoped: Scopes(7),
			Paths: []PathRule{{"/usr", FSReadFile}}, Ports: []PortRule{{80, NetConnectTCP}}}, false, ""},
		{"ports on ABI 3", Ruleset{ABI: 3, HandledFS: HandledFS(3), HandledNet: NetBindTCP}, true, "bind_tcp"},
		{"scopes on ABI 5", Ruleset{ABI: 5, HandledFS: HandledFS(5), Scoped: ScopeSignal}, true, "signal"},
		{"truncate on ABI 2", Ruleset{ABI: 2, HandledFS: HandledFS(2) | FSTruncate}, true, "truncate"},
		{"ioctl_dev on ABI 4", Ruleset{ABI: 4, HandledFS: HandledFS(4) | FSIoctlDev}, true, "ioctl_dev"},
		{"rule beyond handled", Ruleset{ABI: 1, HandledFS: HandledFS(1), Paths: []PathRule{{"/x", FSRefer}}}, false, "unhandled"},
		{"empty rule", Ruleset{ABI: 7, HandledFS: HandledFS(7), Paths: []PathRule{{"/x", 0}}}, false, "unhandled or no rights"},
		{"port rule, net unhandled", Ruleset{ABI: 7, HandledFS: HandledFS(7), Ports: []PortRule{{80, NetBindTCP}}}, false, "port 80"},
	} {
		err := tc.rs.Check()
		if tc.error == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || errors.Is(err, ErrUnavailable) != tc.unav || !strings.Contains(err.Error(), tc.error) {
			t.Errorf("%s: %v, want an error saying %q (unavailable %v)", tc.name, err, tc.error, tc.unav)
		}
	}
}

func TestHandledByABI(t *testing.T) {
	for abi, want := range map[int]uint64{0: 0, 1: 0x1fff, 2: 0x3fff, 3: 0x7fff, 4: 0x7fff, 5: 0xffff, 7: 0xffff} {
		if got := HandledFS(abi); got != want {
			t.Errorf("HandledFS(%d) = %#x, want %#x", abi, got, want)
		}
	}
	if HandledNet(3) != 0 || HandledNet(4) != 3 || Scopes(5) != 0 || Scopes(6) != 3 {
		t.Errorf("net/scopes by ABI wrong")
	}
}
