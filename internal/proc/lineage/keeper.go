//go:build unix

package lineage

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/exitcode"
)

// The keeper outlives a supervisor that is killed (kill -9) to end what
// its runner left behind: the parent-death signal reaches only the runner
// itself. It is this binary re-executed in a session of its own, with no
// parent-death signal, holding the read end of a pipe whose only writer is
// the supervisor. Its first line names the lineage ("keep TOKEN CGROUP");
// "done" releases it (the supervisor stopped the lineage itself); EOF
// without "done" means the supervisor died, and the keeper kills the
// runner's cgroup and every process carrying the token, then exits.
const (
	keeperEnv   = "LOKI_LINEAGE_KEEPER"
	keeperArg0  = "loki-lineage-keeper"
	keeperFD    = 3
	keeperDone  = "done"
	keeperWords = "keep"
	// keeperRounds bounds KillByToken's passes: a lineage that forks as
	// fast as it is killed still ends within them.
	keeperRounds = 100
)

// keeper is the supervisor's side: the pipe's write end.
type keeper struct {
	w      *os.File
	cmd    *exec.Cmd
	exited chan struct{} // closed once the keeper is reaped
}

// startKeeper starts the keeper for token and cgroup dir (empty: none)
// and tells it what to guard. Failure is not fatal to the run: the
// lineage is then as safe as it was without one (Containment says so).
func startKeeper(token, cgDir string) *keeper {
	if !keeperSupported {
		return nil
	}
	exe, err := selfExecutable()
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	if cgDir == "" {
		cgDir = "-"
	}
	cmd := &exec.Cmd{
		Path: exe,
		Args: []string{keeperArg0},
		// Nothing of the supervisor's environment: the keeper needs none
		// and must not carry the token (it would count as a member).
		Env:        []string{keeperEnv + "=1"},
		ExtraFiles: []*os.File{r},
		// Its own session: a signal to the supervisor's group or terminal
		// (Ctrl-C, a kill of the job) does not end it first.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil
	}
	if _, err := fmt.Fprintf(w, "%s %s %s\n", keeperWords, token, cgDir); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		w.Close()
		return nil
	}
	k := &keeper{w: w, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(k.exited)
	}()
	return k
}

// release tells the keeper the lineage is stopped (startKeeper's
// goroutine reaps it).
func (k *keeper) release() {
	if k == nil {
		return
	}
	fmt.Fprintln(k.w, keeperDone)
	k.w.Close()
}

// IsKeeper reports whether this process was started by Start as a
// runner's keeper. Like IsGate, it must be asked before anything else.
func IsKeeper() bool {
	if os.Getenv(keeperEnv) != "1" || len(os.Args) != 1 || os.Args[0] != keeperArg0 {
		return false
	}
	return isFIFO(keeperFD)
}

// RunKeeper is the keeper's body (see keeper above). It returns only with
// its outcome: nil when released or when it has killed what was left.
func RunKeeper() error {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	in := bufio.NewReader(os.NewFile(keeperFD, "keeper"))
	first, err := in.ReadString('\n')
	f := strings.Fields(first)
	if err != nil || len(f) != 3 || f[0] != keeperWords {
		return exitcode.Exited(2) // not started by startKeeper: guard nothing
	}
	token, cgDir := f[1], f[2]
	if line, _ := in.ReadString('\n'); strings.TrimSpace(line) == keeperDone {
		return nil
	}
	// The supervisor is gone without stopping the lineage.
	if cgDir != "-" && strings.HasPrefix(filepath.Base(cgDir), cgroupPrefix) {
		reclaimCgroup(cgDir)
	}
	_, _ = KillByToken(token, keeperRounds)
	return nil
}
