package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// exitBound is how long after its attach ended the agent container may
// take to be reported exited: its output streams close only when it has.
const exitBound = 10 * time.Second

// Config is one owner's session.
type Config struct {
	Runtime        *Runtime
	Pod, Namespace string
	// Peer is the prelude; an empty Argv takes argv and cwd from the
	// sandbox's kubernetes.LaunchAnnotation.
	Peer launch.Spec
	// StartTimeout bounds the wait for the sandbox and its containers.
	StartTimeout time.Duration
	Stdin        io.Reader
	Stdout       io.Writer
	Stderr       io.Writer
}

// Run is the owner's whole session. It returns nil for the agent's exit
// code 0 and an outcome of package exitcode otherwise: the agent's own
// code (silent), ErrAttach as not launched (127), ErrCut as refused (125).
func Run(ctx context.Context, cfg Config) error {
	start, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	sb, err := cfg.Runtime.Sandbox(start, cfg.Pod, cfg.Namespace)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	peer := cfg.Peer
	if len(peer.Argv) == 0 {
		l, err := kubernetes.ParseLaunch(sb.Annotations[kubernetes.LaunchAnnotation])
		if err != nil {
			return exitcode.Usage(fmt.Errorf("%v: give the command after --", err))
		}
		peer.Argv = l.Argv
		if peer.Cwd == "" {
			peer.Cwd = l.Cwd
		}
	}
	if peer.Cwd == "" {
		peer.Cwd = "/"
	}
	prelude, err := launch.Encode(peer)
	if err != nil {
		return exitcode.Usage(err)
	}
	// The holder first: it renews only once the owner said hello, and
	// stops when this stream ends (this process died, or returned).
	holder, err := cfg.Runtime.Container(start, sb.Id, kubernetes.HolderContainer)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	hs, err := attach(start, cfg.Runtime, holder.Id, true, false, false)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	defer hs.Close()
	if _, err := hs.Stdin.Write([]byte{'\n'}); err != nil {
		return exitcode.NotLaunched(fmt.Errorf("%w: the lease holder's stdin: %v", ErrAttach, err))
	}
	agent, err := cfg.Runtime.Container(start, sb.Id, kubernetes.AgentContainer)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	if agent.State != runtimeapi.ContainerState_CONTAINER_RUNNING { // exited before anyone attached: its output is only in the log
		return exitcode.NotLaunched(fmt.Errorf("%w: the agent container exited before the attach (see its log)", ErrAttach))
	}
	as, err := attach(start, cfg.Runtime, agent.Id, true, true, true)
	if err != nil {
		return exitcode.NotLaunched(err)
	}
	defer as.Close()
	go func() {
		// Errors end the copy: the server closing the attach (the agent
		// exited) is the usual one, and not reading stdin is the peer's
		// right.
		if _, err := as.Stdin.Write(prelude); err == nil {
			io.Copy(as.Stdin, cfg.Stdin)
		}
		as.Stdin.Close() // stdinOnce: the container's stdin reaches EOF
	}()
	var wg sync.WaitGroup
	relay := func(dst io.Writer, src io.Reader) {
		defer wg.Done()
		if _, err := io.Copy(dst, src); err != nil {
			io.Copy(io.Discard, src) // never stall the server (and the log) on our reader
		}
	}
	wg.Add(2)
	go relay(cfg.Stdout, as.Stdout)
	go relay(cfg.Stderr, as.Stderr)
	wg.Wait()
	cut := as.Status()
	wait, cancelWait := context.WithTimeout(ctx, exitBound)
	defer cancelWait()
	code, err := cfg.Runtime.Exited(wait, agent.Id)
	switch {
	case cut != nil:
		return exitcode.Refused(cut)
	case err != nil:
		return exitcode.Refused(fmt.Errorf("%w: the attach ended while the agent container still runs", ErrCut))
	case code == 0:
		return nil
	}
	return exitcode.Exited(int(code))
}

func attach(ctx context.Context, rt *Runtime, id string, stdin, stdout, stderr bool) (*Streams, error) {
	u, err := rt.AttachURL(ctx, id, stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	s, err := Dial(ctx, u, stdin, stdout, stderr)
	if errors.Is(err, ErrAttach) {
		return nil, fmt.Errorf("%w (container %.12s)", err, id)
	}
	return s, err
}
