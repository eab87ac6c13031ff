package proof

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/loki-sh/loki/internal/proof/hosttool"
)

// GPGTimeout bounds one gpg --verify.
const GPGTimeout = 30 * time.Second

// resolveGPG finds the system's gpg (a test replaces it).
var resolveGPG = func() (string, error) { return hosttool.Resolve("gpg") }

// checkGPG verifies a detached signature with the system's gpg (never one
// found on PATH: hosttool) and the
// caller's keyring (GNUPGHOME). Without a signature, or without gpg, the
// verdict is "n/a", as the reference verifier reports it.
func checkGPG(sig Signature) GPG {
	if len(sig.Sig) == 0 {
		return GPGNotApplicable
	}
	gpg, err := resolveGPG()
	if err != nil {
		return GPGNotApplicable
	}
	dir, err := os.MkdirTemp("", "loki-proof-gpg-")
	if err != nil {
		return GPGBad
	}
	defer os.RemoveAll(dir)
	data, sigPath := filepath.Join(dir, "proof.json"), filepath.Join(dir, "proof.json.sig")
	if os.WriteFile(data, sig.Data, 0o600) != nil || os.WriteFile(sigPath, sig.Sig, 0o600) != nil {
		return GPGBad
	}
	ctx, cancel := context.WithTimeout(context.Background(), GPGTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gpg, "--batch", "--no-tty", "--quiet", "--verify", sigPath, data)
	cmd.Env = hosttool.Env(os.Environ())
	cmd.WaitDelay = time.Second
	if cmd.Run() != nil {
		return GPGBad
	}
	return GPGGood
}

// signatureNextTo reads the detached signature stored beside a receipt:
// <file>.asc (armored) or <file>.sig (binary). Absent both, nil.
func signatureNextTo(path string) []byte {
	for _, ext := range []string{".asc", ".sig"} {
		if b, err := readLimited(path + ext); err == nil {
			return b
		}
	}
	return nil
}
