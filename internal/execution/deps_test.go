package execution

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

type failingSpawner struct{ got *Command }

func (s failingSpawner) Start(c Command) (Runner, error) {
	*s.got = c
	return nil, fmt.Errorf("%w: no such file", lineage.ErrNotFound)
}

type recordingProofs struct{ empty *string }

func (p recordingProofs) Empty(_, reason string) Proof { *p.empty = reason; return fakeProof{} }
func (recordingProofs) Snapshot(ProofSource) Proof     { panic("no run, no snapshot") }

type noDigest struct{}

func (noDigest) TreeDigest(context.Context, string) (string, error) { return "", errors.New("unused") }

// prefixing is a confinement that wraps the argv, as Seatbelt does.
type prefixing struct{}

func (prefixing) Confine(r ConfineRequest) (Confined, error) {
	return Confined{Args: append([]string{"sandbox", r.Spec}, r.Args...), Record: &seatbelt.Confinement{Kind: "test"}}, nil
}

// Each collaborator of Run is one small interface a test can replace: a
// runner that cannot be started is recorded as launch_failed (127) with
// the confined argv, the confinement and an empty proof.
func TestRunThroughReplacedDeps(t *testing.T) {
	store := state.NewStore(t.TempDir())
	id := NewID()
	var started Command
	var emptyReason string
	d := Deps{Spawner: failingSpawner{&started}, Proofs: recordingProofs{&emptyReason}, Digester: noDigest{}, Confiner: prefixing{}}
	spec := Spec{ID: id, Store: store, Args: []string{"run.sh"}, Workspace: t.TempDir(), LokiDir: t.TempDir(), SpecFile: "spec.md"}
	res, err := Run(context.Background(), spec, Timing{StopGrace: 1, Poll: 1, DescendantGrace: 1}, d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Launched || res.ExitCode() != 127 {
		t.Fatalf("result %+v (exit %d), want not launched, 127", res, res.ExitCode())
	}
	if len(started.Args) != 3 || started.Args[0] != "sandbox" || started.Args[1] != "spec.md" || started.Args[2] != "run.sh" {
		t.Fatalf("spawner got argv %q, want the confined one", started.Args)
	}
	if emptyReason != "runner launch failed" {
		t.Fatalf("empty proof reason %q", emptyReason)
	}
	st, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Str(state.FieldState) != state.StateExited || st.Str(state.FieldTerminationReason) != "launch_failed" ||
		st.Map(state.FieldConfinement)["kind"] != "test" {
		t.Fatalf("record %v", st)
	}
	if _, err := Run(context.Background(), spec, Timing{}, Deps{Spawner: d.Spawner}); !errors.Is(err, ErrNotWired) {
		t.Fatalf("Run with missing collaborators = %v, want ErrNotWired", err)
	}
}

// TestSandboxImportsNoExecution keeps build confinement below the
// executions it confines: no package under sandbox may import execution
// or its state record (the atomic write they share lives in safefile).
func TestSandboxImportsNoExecution(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./sandbox/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/loki-sh/loki/internal/"
	seen := 0
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		seen++
		if rel == "execution" || rel == "execution/state" {
			t.Errorf("a sandbox package depends on %s", rel)
		}
	}
	if seen < 4 {
		t.Fatalf("go list -deps named %d packages of this module; the test cannot be trusted", seen)
	}
}

// survivor is a runner that has exited 0, but whose reconciliation saw a
// member of its lineage it could not kill.
type survivor struct{ done chan struct{} }

func (s survivor) PID() int                { return os.Getpid() }
func (survivor) Identity() procid.Identity { return procid.Identity{} }
func (survivor) Hold() (func(), bool)      { return func() {}, false }
func (s survivor) Done() <-chan struct{}   { return s.done }
func (survivor) Status() (int, int)        { return 0, 0 }
func (survivor) Refresh() error            { return nil }
func (survivor) Close() error              { return nil }
func (survivor) Reconcile(time.Duration) lineage.Outcome {
	o := lineage.EmptyOutcome()
	o.Checked, o.Detected, o.RemainingPIDs = true, true, []int{4242}
	return o
}

type survivorSpawner struct{}

func (survivorSpawner) Start(Command) (Runner, error) {
	d := make(chan struct{})
	close(d)
	return survivor{d}, nil
}

type boundProofs struct{ empty *string }

func (p boundProofs) Empty(_, reason string) Proof { *p.empty = reason; return fakeProof{} }
func (boundProofs) Snapshot(ProofSource) Proof     { return fakeProof{completed: true} }

type plainConfiner struct{}

func (plainConfiner) Confine(r ConfineRequest) (Confined, error) { return Confined{Args: r.Args}, nil }

// TestDetectedNeverBinds: a member of the lineage seen alive (detected,
// here one left in remaining_pids) means no receipt is even snapshotted:
// the proof is the empty binding, whatever the receipt would have said.
func TestDetectedNeverBinds(t *testing.T) {
	store := state.NewStore(t.TempDir())
	id := NewID()
	var emptyReason string
	d := Deps{Spawner: survivorSpawner{}, Proofs: boundProofs{&emptyReason}, Digester: noDigest{}, Confiner: plainConfiner{}}
	spec := Spec{ID: id, Store: store, Args: []string{"run.sh"}, Workspace: t.TempDir(), LokiDir: t.TempDir()}
	res, err := Run(context.Background(), spec, Timing{StopGrace: time.Second, Poll: time.Millisecond, DescendantGrace: time.Millisecond}, d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != "descendants_uncontained" || !strings.Contains(emptyReason, "descendants survived") {
		t.Fatalf("reason %q, empty proof %q", res.Reason, emptyReason)
	}
}
