package proof

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/proof/hosttool"
	"github.com/loki-sh/loki/internal/testutil"
)

// gpgHome makes a throw-away keyring with one signing key and returns a
// function that signs data (detached, armored). The agent gpg starts for
// this home is stopped by the same home at cleanup.
func gpgHome(t *testing.T) func(data []byte) []byte {
	t.Helper()
	gpg := testutil.RequireCommand(t, "gpg")
	home, err := os.MkdirTemp("", "lk-gpg-") // short: the agent socket path is length-limited
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GNUPGHOME", home)
	t.Cleanup(func() {
		if p, err := exec.LookPath("gpgconf"); err == nil {
			exec.Command(p, "--homedir", home, "--kill", "gpg-agent").Run()
		}
		os.RemoveAll(home)
	})
	gen := exec.Command(gpg, "--batch", "--passphrase", "", "--quick-gen-key", "loki test <test@example.invalid>", "ed25519", "sign", "never")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gpg key generation: %v\n%s", err, out)
	}
	return func(data []byte) []byte {
		in := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(in, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(gpg, "--batch", "--armor", "--detach-sign", "--output", "-", in).Output()
		if err != nil {
			t.Fatalf("gpg sign: %v", err)
		}
		return out
	}
}

func TestDetachedSignature(t *testing.T) {
	sign := gpgHome(t)
	raw := testdata(t, "receipt.valid.json")
	other := testdata(t, "receipt.gaps.json")
	for _, tc := range []struct {
		name    string
		sig     []byte
		ext     string
		gpg     any
		trusted bool
		ok      bool
	}{
		{"good armored", sign(raw), ".asc", true, false, true},
		{"good binary name", sign(raw), ".sig", true, false, true},
		{"signature of other bytes", sign(other), ".asc", false, true, false},
		{"garbage signature", []byte("not a signature"), ".asc", false, true, false},
		{"no signature", nil, "", "n/a", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, raw)
			if tc.sig != nil {
				if err := os.WriteFile(p+tc.ext, tc.sig, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			in, err := VerifyFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if in.GPG.JSONValue() != tc.gpg || in.GeneratorTrusted() != tc.trusted || in.OK != tc.ok {
				t.Errorf("gpg_ok=%v generator_trusted=%v ok=%v, want %v %v %v (%v)",
					in.GPG.JSONValue(), in.GeneratorTrusted(), in.OK, tc.gpg, tc.trusted, tc.ok, in.Reasons)
			}
		})
	}
	// Without a system gpg a signature cannot be checked: "n/a".
	p := writeTemp(t, raw)
	if err := os.WriteFile(p+".asc", sign(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(f func() (string, error)) { resolveGPG = f }(resolveGPG)
	resolveGPG = func() (string, error) { return "", hosttool.ErrNotFound }
	in, err := VerifyFile(p)
	if err != nil || in.GPG != GPGNotApplicable || !in.OK {
		t.Errorf("without gpg: gpg=%v ok=%v err=%v", in.GPG.JSONValue(), in.OK, err)
	}
}
