//go:build unix

package treedigest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loki-sh/loki/internal/proof/hosttool"
)

// gitEnv is the environment git runs with: the caller's with PATH set to
// system directories (hosttool.SafePath), minus every GIT_* variable (GIT_DIR or GIT_WORK_TREE would point git at another tree), with
// messages in English (they are matched below) and no optional index
// writes, pager or prompt.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(hosttool.Env(env),
		"LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat")
}

// gitArgs are prepended to every invocation. core.fsmonitor names a program
// git would run on index reads; the repository is agent-controlled, so it
// is forced off.
var gitArgs = []string{"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"}

type gitRunner struct {
	timeout time.Duration
	env     []string
}

// run executes git in dir and returns its stdout. A non-zero exit is
// returned as *gitExit so that callers can tell "not a repository" apart.
func (g gitRunner) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	git, err := hosttool.Resolve("git")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGit, err)
	}
	cmd := exec.CommandContext(ctx, git, append(append([]string{}, gitArgs...), args...)...)
	cmd.Dir = dir
	cmd.Env = g.env
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: git %s in %s: %v", ErrGit, args[0], dir, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, &gitExit{args: args, code: ee.ExitCode(), stderr: firstLine(stderr.String())}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGit, err)
	}
	return stdout.Bytes(), nil
}

type gitExit struct {
	args   []string
	code   int
	stderr string
}

func (e *gitExit) Error() string {
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), e.stderr)
}

func (e *gitExit) Unwrap() error { return ErrGit }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// notARepo recognises the messages git prints when dir is outside any work
// tree (or inside a .git directory or a bare repository). Anything else,
// e.g. "dubious ownership", is a real failure: the caller must not treat a
// repository it could not read as "no repository".
func notARepo(err error) bool {
	var ge *gitExit
	if !errors.As(err, &ge) {
		return false
	}
	return strings.Contains(ge.stderr, "not a git repository") ||
		strings.Contains(ge.stderr, "must be run in a work tree")
}

// isTop reports whether dir is the top level of a git work tree.
func (g gitRunner) isTop(ctx context.Context, dir string) (bool, error) {
	out, err := g.run(ctx, dir, "rev-parse", "--show-toplevel")
	if notARepo(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	top := strings.TrimSuffix(string(out), "\n")
	if top == "" {
		return false, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrNotWorkTree, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrNotWorkTree, err)
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return false, nil
	}
	return filepath.Clean(real) == filepath.Clean(realTop), nil
}

// indexEntry is one line of `git ls-files --stage -z`.
type indexEntry struct {
	mode  string
	oid   string
	stage int
}

const gitlinkMode = "160000"

// index reads the index: every path with its stage entries. `ls-files
// --stage` lists exactly the paths `ls-files --cached` lists, with their
// modes, so one call gives both the path set and the gitlinks.
func (g gitRunner) index(ctx context.Context, dir string) (map[string][]indexEntry, error) {
	out, err := g.run(ctx, dir, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	return parseStage(out)
}

func parseStage(out []byte) (map[string][]indexEntry, error) {
	idx := map[string][]indexEntry{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 || len(path) == 0 {
			return nil, fmt.Errorf("%w: unexpected ls-files record %q", ErrGit, rec)
		}
		stage, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%w: unexpected stage in %q", ErrGit, rec)
		}
		p := string(path)
		idx[p] = append(idx[p], indexEntry{mode: fields[0], oid: fields[1], stage: stage})
	}
	return idx, nil
}

// headOID is `git rev-parse HEAD` of a submodule checkout, or "" when it has
// no commit yet (--verify -q exits 1 then; other failures are errors).
func (g gitRunner) headOID(ctx context.Context, dir string) (string, error) {
	out, err := g.run(ctx, dir, "rev-parse", "--verify", "-q", "HEAD")
	var ge *gitExit
	if errors.As(err, &ge) && ge.code == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
