//go:build unix

package provider

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/loki-sh/loki/internal/execution/runnerenv"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/safefile"
)

// Bounds of one probe.
const (
	AuthTimeout      = 10 * time.Second
	ReadinessTimeout = 20 * time.Second
	MaxOutput        = 1 << 20 // stdout bytes kept for classification
)

// Result is the probe's answer. It carries no provider output.
type Result struct {
	Provider       string `json:"provider"`
	Available      bool   `json:"available"`
	Classification string `json:"classification"`
	Action         string `json:"action"`
	// LiveInference is set only when a live request passed.
	LiveInference bool `json:"live_inference_passed,omitempty"`
}

// Map returns the result under the reference's field names (for canonjson).
func (r Result) Map() map[string]any {
	m := map[string]any{
		"provider":       r.Provider,
		"available":      r.Available,
		"classification": r.Classification,
		"action":         r.Action,
	}
	if r.LiveInference {
		m["live_inference_passed"] = true
	}
	return m
}

// Prober runs the probes. Its fields say where and how long; tests point
// SandboxExec at a stand-in and GOOS at "darwin", the real one is Default.
type Prober struct {
	Lookup           boundary.Lookup
	GOOS             string
	SandboxExec      string
	AuthTimeout      time.Duration
	ReadinessTimeout time.Duration
}

// Default probes on this machine with the process environment.
func Default() Prober {
	return Prober{
		Lookup:           boundary.Environ,
		GOOS:             runtime.GOOS,
		SandboxExec:      seatbelt.SandboxExec,
		AuthTimeout:      AuthTimeout,
		ReadinessTimeout: ReadinessTimeout,
	}
}

// Smoke probes provider in a fresh workspace made inside workspaceRoot (and
// removed afterwards), the way the engine checks readiness before it
// advertises itself.
func (p Prober) Smoke(ctx context.Context, workspaceRoot, runSh, provider string) (Result, error) {
	root, err := boundary.RequireDir(p.Lookup, boundary.ArgWorkspaceRoot, workspaceRoot)
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp(root, ".provider-auth-probe-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	ws, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Result{}, err
	}
	spec := filepath.Join(ws, "spec.md")
	if err := os.WriteFile(spec, []byte("provider auth capability probe"), 0o600); err != nil {
		return Result{}, err
	}
	return p.Status(ctx, provider, ws, runSh, spec)
}

// Status proves provider's login and one live request inside the Seatbelt
// boundary of workspace. An error means the probe could not be set up (for
// example an invalid boundary); every other outcome is a Result.
func (p Prober) Status(ctx context.Context, provider, workspace, runSh, spec string) (Result, error) {
	res := Result{Provider: provider, Action: Action(provider)}
	verdict := func(class string) (Result, error) {
		res.Classification = class
		return res, nil
	}
	if !seatbelt.Enabled(p.Lookup, seatbelt.EnvSeatbelt) {
		res.Available = true
		return verdict(SeatbeltNotEnabled)
	}
	auth, ok := authCommands[provider]
	if !ok {
		return verdict(AuthProbeUnsupported)
	}
	ready, ok := readinessCommands[provider]
	if !ok {
		return verdict(ReadinessProbeUnsupported)
	}
	var err error
	for _, path := range []*string{&workspace, &runSh, &spec} {
		if *path, err = filepath.EvalSymlinks(*path); err != nil {
			return Result{}, err
		}
	}
	if !p.sandboxUsable() {
		return verdict(AuthConfinementUnavailable)
	}
	b, err := p.prepare(workspace, runSh, spec)
	if err != nil {
		return Result{}, err
	}

	o, err := b.run(ctx, "provider-auth-", auth, p.AuthTimeout)
	if class, err := failedRun(err, AuthProbeTimeout); err != nil {
		return Result{}, err
	} else if class != "" {
		return verdict(class)
	}
	if ok, class := classifyAuth(provider, o); !ok {
		return verdict(class)
	}

	o, err = b.run(ctx, "provider-ready-", ready, p.ReadinessTimeout)
	if class, err := failedRun(err, ReadinessProbeTimeout); err != nil {
		return Result{}, err
	} else if class != "" {
		return verdict(class)
	}
	if !readinessPassed(provider, o) {
		return verdict(LiveInferenceUnavailable)
	}
	res.Available, res.LiveInference = true, true
	return verdict(Available)
}

// failedRun classifies a run that produced no outcome: a timeout, a CLI
// (or sandbox-exec) that could not start, or a setup failure, which is an
// error rather than a verdict about the provider.
func failedRun(err error, timeoutClass string) (string, error) {
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, errSetup):
		return "", err
	case errors.Is(err, errTimeout):
		return timeoutClass, nil
	}
	return CLIUnavailable, nil
}

func (p Prober) sandboxUsable() bool {
	if p.GOOS != "darwin" {
		return false
	}
	fi, err := os.Stat(p.SandboxExec)
	return err == nil && fi.Mode().IsRegular()
}

// confinedRun is everything a confined CLI run needs.
type confinedRun struct {
	sandboxExec string
	workspace   string
	runtimeDir  string
	env         []string
	profile     []byte
}

func (p Prober) prepare(workspace, runSh, spec string) (*confinedRun, error) {
	lokiDir := filepath.Join(workspace, ".loki")
	env, err := runnerenv.BuildFrom(p.Lookup, workspace, lokiDir)
	if err != nil {
		return nil, err
	}
	w, err := boundary.ForWorkspace(p.Lookup, workspace, runSh, spec)
	if err != nil {
		return nil, err
	}
	return &confinedRun{
		sandboxExec: p.SandboxExec,
		workspace:   workspace,
		runtimeDir:  filepath.Join(lokiDir, "host-runtime"),
		env:         runnerenv.List(env),
		profile:     seatbelt.Profile(w),
	}, nil
}

var (
	errTimeout = errors.New("provider probe timed out")
	errSetup   = errors.New("provider probe profile could not be written")
)

// run executes argv under the profile (written to a one-off file that is
// removed afterwards) and returns its exit code and bounded stdout.
// A start failure is returned as an error; so is the timeout, as errTimeout.
func (b *confinedRun) run(ctx context.Context, prefix string, argv []string, timeout time.Duration) (outcome, error) {
	profilePath := filepath.Join(b.runtimeDir, prefix+randomHex()+".sb")
	if err := safefile.WriteAtomic(profilePath, b.profile, 0o600); err != nil {
		return outcome{}, errors.Join(errSetup, err)
	}
	defer os.Remove(profilePath)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.sandboxExec, append([]string{"-f", profilePath}, argv...)...)
	cmd.Dir = b.workspace
	cmd.Env = b.env
	stdout := &limitedBuffer{max: MaxOutput}
	cmd.Stdout = stdout
	cmd.Stderr = io.Discard
	killGroupOnCancel(cmd)
	if err := cmd.Start(); err != nil {
		return outcome{}, err
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		return outcome{}, errTimeout
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !errors.Is(err, exec.ErrWaitDelay) {
		return outcome{}, err
	}
	return outcome{code: cmd.ProcessState.ExitCode(), stdout: stdout.Bytes()}, nil
}

func randomHex() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// limitedBuffer keeps the first max bytes and drops the rest, so a CLI
// that floods stdout cannot exhaust memory (its output is then not valid
// JSON and classifies as such). It deliberately has no ReadFrom, which
// io.Copy would prefer over the bounded Write.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte { return l.buf.Bytes() }
