//go:build unix

package seatbelt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/loki-sh/loki/internal/execution/runnerenv"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
)

// ProbeTimeout bounds one run of the payload under sandbox-exec.
const ProbeTimeout = 15 * time.Second

// Payload is the program the probe runs under the profile. It must behave
// as RunPayload given OUTPUT SIBLING UNIX PORT after Args. Binary is copied
// into the probe workspace first, because the profile lets a build execute
// only from paths it grants and the installed binary may live elsewhere.
type Payload struct {
	Binary string
	Args   []string
}

// ProbeResult is the boundary identity together with the SHA-256 of the
// profile the kernel enforced; the digest is what LOKI_HOST_SEATBELT_PROBE_SHA256
// is set from.
type ProbeResult struct {
	boundary.Identity
	ProbeSHA256 string
}

// Map returns the result under the reference's field names.
func (r ProbeResult) Map() map[string]string {
	m := r.Identity.Map()
	m["probe_sha256"] = r.ProbeSHA256
	return m
}

// Probe proves the boundary configured in the environment in the running
// kernel: it builds a throw-away workspace and sibling inside workspaceRoot,
// confines payload to the workspace and requires every check to come out
// as the profile promises. It works only on macOS.
func Probe(ctx context.Context, workspaceRoot, runSh string, payload Payload) (ProbeResult, error) {
	return realHost().probe(ctx, workspaceRoot, runSh, payload)
}

func (h host) probe(ctx context.Context, workspaceRoot, runSh string, payload Payload) (ProbeResult, error) {
	if err := h.usable(); err != nil {
		return ProbeResult{}, err
	}
	root, err := boundary.RequireDir(h.lookup, boundary.ArgWorkspaceRoot, workspaceRoot)
	if err != nil {
		return ProbeResult{}, err
	}
	ws, err := tempDir(root, ".seatbelt-probe-workspace-")
	if err != nil {
		return ProbeResult{}, err
	}
	defer os.RemoveAll(ws)
	sibling, err := tempDir(root, ".seatbelt-probe-sibling-")
	if err != nil {
		return ProbeResult{}, err
	}
	defer os.RemoveAll(sibling)

	run, err := h.prepareProbe(ws, sibling, runSh, payload)
	if err != nil {
		return ProbeResult{}, err
	}
	if err := run.execute(ctx, h); err != nil {
		return ProbeResult{}, err
	}
	id, err := boundary.IdentityOf(h.lookup, workspaceRoot, runSh)
	if err != nil {
		return ProbeResult{}, err
	}
	return ProbeResult{Identity: id, ProbeSHA256: sha256Hex(run.profile)}, nil
}

// probeRun is one prepared payload run: its files and the profile.
type probeRun struct {
	workspace, secret, socket, output, profilePath string
	port                                           int
	profile                                        []byte
	argv                                           []string
}

func (h host) prepareProbe(ws, sibling, runSh string, payload Payload) (*probeRun, error) {
	r := &probeRun{
		workspace:   ws,
		secret:      filepath.Join(sibling, "secret.txt"),
		socket:      filepath.Join(ws, "probe.sock"),
		output:      filepath.Join(ws, "probe.txt"),
		profilePath: filepath.Join(ws, "probe.sb"),
	}
	spec := filepath.Join(ws, "spec.md")
	if err := os.WriteFile(spec, []byte("seatbelt probe"), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(r.secret, []byte("must remain unreadable"), 0o600); err != nil {
		return nil, err
	}
	w, err := boundary.ForWorkspace(h.lookup, ws, runSh, spec)
	if err != nil {
		return nil, err
	}
	if r.port, err = freePort(w.ReservedPorts()); err != nil {
		return nil, err
	}
	r.profile = Profile(w)
	if err := os.WriteFile(r.profilePath, r.profile, 0o600); err != nil {
		return nil, err
	}
	bin := filepath.Join(ws, "loki-seatbelt-probe")
	if err := copyExecutable(payload.Binary, bin); err != nil {
		return nil, fmt.Errorf("seatbelt: stage probe payload: %w", err)
	}
	r.argv = append([]string{h.sandboxExec, "-f", r.profilePath, bin}, payload.Args...)
	r.argv = append(r.argv, r.output, r.secret, r.socket, strconv.Itoa(r.port))
	return r, nil
}

// execute runs the payload against a listening unix socket and judges it.
func (r *probeRun) execute(ctx context.Context, h host) error {
	ln, err := net.Listen("unix", r.socket)
	if err != nil {
		return fmt.Errorf("seatbelt: probe socket (a unix socket path holds about 100 bytes; use a shorter workspace root): %w", err)
	}
	defer ln.Close()

	ctx, cancel := context.WithTimeout(ctx, h.probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Dir = r.workspace
	cmd.Env = probeEnv(h.lookup, r.workspace)
	killGroupOnCancel(cmd)
	err = cmd.Run()
	if ctx.Err() != nil {
		return ErrProbeUnfinished
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return fmt.Errorf("%w: %v", ErrProbeUnfinished, err)
	}
	code := cmd.ProcessState.ExitCode()
	out, _ := os.ReadFile(r.output)
	if code != 0 || string(out) != "confined" {
		return fmt.Errorf("%w with exit %d%s", ErrProbeFailed, code, payloadMeaning(code))
	}
	return nil
}

// payloadMeaning turns a payload exit code into words for the user.
func payloadMeaning(code int) string {
	switch code {
	case PayloadSiblingRead:
		return " (a directory outside the workspace was readable)"
	case PayloadUnixConnect:
		return " (a unix-socket connect was allowed)"
	case PayloadReservedBind:
		return " (a reserved port could be bound)"
	case PayloadBrokenAllow:
		return " (something the profile must allow was refused)"
	}
	return ""
}

// probeEnv is the payload's whole environment: nothing of the caller's
// beyond HOME, LANG and the configured child PATH.
func probeEnv(lookup boundary.Lookup, workspace string) []string {
	get := func(k, def string) string {
		if v, ok := lookup(k); ok {
			return v
		}
		return def
	}
	return []string{
		"HOME=" + get("HOME", "/var/empty"),
		"LANG=" + get("LANG", "C"),
		"PATH=" + get(boundary.EnvChildPath, runnerenv.DefaultPath),
		"TMPDIR=" + workspace,
	}
}

// freePort returns the first reserved port nothing on 127.0.0.1 holds, so
// that a refused bind inside the sandbox can only be the profile's doing.
func freePort(ports []int) (int, error) {
	for _, p := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		ln.Close()
		return p, nil
	}
	return 0, ErrNoFreePort
}

// tempDir makes a private directory in root and returns its resolved path.
func tempDir(root, prefix string) (string, error) {
	d, err := os.MkdirTemp(root, prefix)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return r, nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
