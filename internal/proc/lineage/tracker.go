//go:build unix

package lineage

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// discoveryWindow is how long after a fork was seen the tracker also scans
// every process of the host for the lineage token.
const discoveryWindow = time.Second

// errGone is what a source returns for a pid that no longer exists.
var errGone = errors.New("process vanished")

// errNoChildren: the kernel offers no children lists (CONFIG_PROC_CHILDREN).
var errNoChildren = errors.New("children lists unavailable")

// procStat is what the tracker needs to know about one process.
type procStat struct {
	state byte
	ppid  int
	sid   int
	start uint64 // raw start time in the platform's unit; stable for a process
}

func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' }

// tokenAnswer is the result of looking for the lineage token in a process's
// environment. Unknown (empty, vanished, unreadable) is not "no".
type tokenAnswer int

const (
	tokenUnknown tokenAnswer = iota
	tokenYes
	tokenNo
)

// source is how the tracker observes processes; one per platform.
type source interface {
	stat(pid int) (procStat, error)             // errGone when the pid does not exist
	children(pid int) ([]int, error)            // errGone, errNoChildren, or another error
	all() ([]int, error)                        // every pid visible to us
	hasToken(pid int, token string) tokenAnswer // the lineage token in its environment?
	dying(pid int) bool                         // already exiting, or a fatal signal is pending
	reap(pid int)                               // collect a zombie child by pid, never wait(-1)
}

// member is one tracked process.
type member struct {
	id    procid.Identity
	start uint64
	depth int
}

// tracker holds the lineage of one runner. All methods are called with mu held.
type tracker struct {
	mu          sync.Mutex
	src         source
	self        int  // the supervisor's pid: never a member
	subreaper   bool // orphans of the lineage come back to self
	treeWalk    bool // children lists are available
	leader      procid.Identity
	leaderStart uint64
	sid         int
	token       string
	members     map[int]*member
	rejected    map[int]uint64 // pid -> start of a process judged foreign
	dying       map[int]uint64 // dead members not yet reparented to us for reaping
	group       *cgroup        // nil without cgroup containment
	windowUntil time.Time
	last        []member // the result of the latest refresh, deepest first
}

// refresh updates the membership and returns it deepest first.
func (t *tracker) refresh() ([]member, error) {
	forked, err := t.update()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTracking, err)
	}
	now := time.Now()
	if forked {
		t.windowUntil = now.Add(discoveryWindow)
	}
	t.last = t.sorted()
	return t.last, nil
}

func (t *tracker) update() (forked bool, err error) {
	if err := t.prune(); err != nil {
		return false, err
	}
	n := len(t.members)
	if t.group != nil {
		if err := t.adoptCgroup(); err != nil {
			return false, err
		}
	}
	full := !t.subreaper || !t.treeWalk || time.Now().Before(t.windowUntil)
	if t.treeWalk {
		if err := t.walk(); err != nil {
			return false, err
		}
		if err := t.adoptOrphans(); err != nil {
			return false, err
		}
	}
	if full {
		if err := t.scanAll(); err != nil {
			return false, err
		}
	}
	return len(t.members) > n, nil
}

// prune drops members that exited or whose pid now names another process,
// reaping the zombies this process inherited as a subreaper.
func (t *tracker) prune() error {
	for pid, m := range t.members {
		st, err := t.src.stat(pid)
		if errors.Is(err, errGone) {
			delete(t.members, pid)
			continue
		}
		if err != nil {
			return err
		}
		if st.start != m.start {
			delete(t.members, pid)
			continue
		}
		if st.dead() {
			if pid != t.leader.PID() { // os/exec reaps the leader
				t.dying[pid] = m.start
			}
			delete(t.members, pid)
		}
	}
	t.reapDying()
	return nil
}

// reapDying collects dead members once they are our children: a zombie whose
// parent died too is reparented to us (the subreaper) and would otherwise
// stay a zombie for the supervisor's lifetime.
func (t *tracker) reapDying() {
	for pid, start := range t.dying {
		st, err := t.src.stat(pid)
		if err != nil || st.start != start {
			delete(t.dying, pid) // reaped by someone else
			continue
		}
		if st.ppid == t.self {
			t.src.reap(pid)
			delete(t.dying, pid)
		}
	}
}

// walk follows children lists from every member (rules 1 and 2).
func (t *tracker) walk() error {
	queue := make([]int, 0, len(t.members))
	for pid := range t.members {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		parent, ok := t.members[pid]
		if !ok {
			continue
		}
		kids, err := t.src.children(pid)
		if errors.Is(err, errGone) {
			continue
		}
		if err != nil {
			return err
		}
		for _, k := range kids {
			if _, known := t.members[k]; known {
				continue
			}
			if t.admit(k, parent.depth+1) {
				queue = append(queue, k)
			}
		}
	}
	return nil
}

// adoptOrphans applies rule 4. The supervisor's children include processes
// it started for itself (git, ps): a child is adopted only with positive
// evidence that it descends from the runner — the runner's session, its
// cgroup, or the lineage token — and a child found foreign is remembered so
// its environment is read once.
func (t *tracker) adoptOrphans() error {
	kids, err := t.src.children(t.self)
	if err != nil {
		return fmt.Errorf("children of the supervisor: %w", err)
	}
	var adopted []int
	for _, k := range kids {
		if _, known := t.members[k]; known || k == t.leader.PID() {
			continue
		}
		st, err := t.src.stat(k)
		if err != nil || st.dead() {
			continue
		}
		if start, ok := t.rejected[k]; ok && start == st.start {
			continue
		}
		switch {
		case st.sid == t.sid:
		case t.token != "" && st.start >= t.leaderStart:
			switch t.src.hasToken(k, t.token) {
			case tokenYes:
			case tokenNo:
				t.rejected[k] = st.start
				continue
			default:
				continue // unknown: ask again next time
			}
		default:
			t.rejected[k] = st.start
			continue
		}
		if t.admit(k, 1) {
			adopted = append(adopted, k)
		}
	}
	if len(adopted) > 0 {
		return t.walk()
	}
	return nil
}

// scanAll looks at every process on the host (the discovery window, or the
// only way when children lists or the subreaper are missing). It admits
// children of members, the runner's session, and token carriers born after
// the runner, until nothing changes.
func (t *tracker) scanAll() error {
	pids, err := t.src.all()
	if err != nil {
		return err
	}
	stats := make(map[int]procStat, len(pids))
	for _, pid := range pids {
		if pid == t.self {
			continue
		}
		if _, known := t.members[pid]; known {
			continue
		}
		st, err := t.src.stat(pid)
		if err != nil || st.dead() {
			continue
		}
		stats[pid] = st
	}
	for changed := true; changed; {
		changed = false
		for pid, st := range stats {
			depth, ok := t.evidence(pid, st)
			if !ok {
				continue
			}
			delete(stats, pid)
			if t.admit(pid, depth) {
				changed = true
			}
		}
	}
	return nil
}

// evidence decides membership of a process seen in a full scan.
func (t *tracker) evidence(pid int, st procStat) (depth int, ok bool) {
	if parent, ok := t.members[st.ppid]; ok {
		return parent.depth + 1, true
	}
	if st.sid == t.sid {
		return 1, true
	}
	if t.token == "" || st.start < t.leaderStart {
		return 0, false // older than the runner: cannot descend from it
	}
	if start, ok := t.rejected[pid]; ok && start == st.start {
		return 0, false
	}
	switch t.src.hasToken(pid, t.token) {
	case tokenYes:
		return 1, true
	case tokenNo:
		t.rejected[pid] = st.start
	}
	return 0, false
}

// adoptCgroup admits every process of the runner's cgroup tree.
func (t *tracker) adoptCgroup() error {
	pids, err := t.group.pids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if _, known := t.members[pid]; known || pid == t.self {
			continue
		}
		depth := 1
		if st, err := t.src.stat(pid); err == nil {
			if parent, ok := t.members[st.ppid]; ok {
				depth = parent.depth + 1
			}
		}
		t.admit(pid, depth)
	}
	return nil
}

// admit records pid with its birth identity; false if it is gone or dying.
func (t *tracker) admit(pid, depth int) bool {
	if pid == t.self || pid <= 0 {
		return false
	}
	st, err := t.src.stat(pid)
	if err != nil || st.dead() {
		return false
	}
	id, err := procid.Capture(pid)
	if err != nil {
		return false
	}
	t.members[pid] = &member{id: id, start: st.start, depth: depth}
	return true
}

// sorted returns the members deepest first (children before parents).
func (t *tracker) sorted() []member {
	out := make([]member, 0, len(t.members))
	for _, m := range t.members {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].depth != out[j].depth {
			return out[i].depth > out[j].depth
		}
		return out[i].id.PID() < out[j].id.PID()
	})
	return out
}
