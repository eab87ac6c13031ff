//go:build linux

package confine

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKeyringsOutOfReach: the kernel's keyrings are not namespaced, and a
// uid-0 peer read the host root's user keyring (where root keeps its
// secrets). Every backend denies the keyring syscalls; the test itself
// (host root) reads the key as the control case.
func TestKeyringsOutOfReach(t *testing.T) {
	var b [6]byte
	rand.Read(b[:])
	name, secret := "loki-confine-"+hex.EncodeToString(b[:]), "s3cret-"+hex.EncodeToString(b[:3])
	for _, be := range rootBackendsOnly() {
		t.Run(be.Name, func(t *testing.T) {
			be.Require(t)
			id, err := unix.AddKey("user", name, []byte(secret), unix.KEY_SPEC_USER_KEYRING)
			if err != nil {
				t.Skipf("no keyrings here: %v", err)
			}
			defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0)
			if got, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", name, 0); err != nil || got != id {
				t.Fatalf("control: the host cannot find its own key: %v", err)
			}
			for _, flags := range [][]string{nil, {"--fs", "host"}} {
				if flags != nil && be.Name != "namespace" {
					continue
				}
				code, out, stderr := session(t, be, flags, netprobe(t, be), "key", name)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				if r["key"] != "refused" {
					t.Errorf("%v: the peer got the host's key: %q", flags, r["key"])
				}
				// Refused by the filter, not merely not found (crun and
				// runc also give the container a keyring of its own).
				if r["keyerr"] != "EPERM" {
					t.Errorf("%v: the keyring search failed with %q, want EPERM from the seccomp filter", flags, r["keyerr"])
				}
			}
		})
	}
}

func rootBackendsOnly() []backend {
	var out []backend
	for _, b := range rows() {
		if !b.Unprivileged {
			out = append(out, b)
		}
	}
	return out
}
