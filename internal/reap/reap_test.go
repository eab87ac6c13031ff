package reap

import (
	"testing"
)

// fakeWaiter hands out a scripted queue of exited children.
type fakeWaiter struct {
	exited []int // pids in the order wait4(-1) would return them
	status map[int]Status
	live   int // children not yet exited
	calls  int
}

func (f *fakeWaiter) wait(pid int) (int, Status, bool, error) {
	f.calls++
	if pid > 0 {
		for i, p := range f.exited {
			if p == pid {
				f.exited = append(f.exited[:i], f.exited[i+1:]...)
				return p, f.status[p], false, nil
			}
		}
		return 0, Status{}, false, nil
	}
	if len(f.exited) == 0 {
		return 0, Status{}, f.live == 0, nil
	}
	p := f.exited[0]
	f.exited = f.exited[1:]
	return p, f.status[p], false, nil
}

func TestSweepIsBoundedAndKeepsThePeer(t *testing.T) {
	cases := []struct {
		name      string
		orphans   int
		peerAt    int // index of the peer in the exit order; -1: not exited
		wantN     []int
		wantPeer  bool
		wantTotal int
	}{
		{"nothing exited", 0, -1, []int{0}, false, 0},
		{"peer only", 0, 0, []int{1}, true, 1},
		{"peer behind a batch of orphans", 100, 99, []int{64, 37}, true, 101},
		{"exactly one batch", 64, -1, []int{64, 0}, false, 64},
		{"orphans but no peer", 10, -1, []int{10}, false, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeWaiter{status: map[int]Status{}, live: 1}
			for i := 0; i < tc.orphans; i++ {
				f.exited = append(f.exited, 1000+i)
			}
			if tc.peerAt >= 0 {
				f.exited = append(f.exited[:tc.peerAt], append([]int{42}, f.exited[tc.peerAt:]...)...)
				f.status[42] = Status{Exited: true, Code: 7}
			}
			r := &Reaper{w: f, batch: DefaultBatch}
			r.SetPeer(42)
			for i, want := range tc.wantN {
				n, more := r.Sweep()
				if n != want {
					t.Fatalf("sweep %d collected %d, want %d", i, n, want)
				}
				if more != (n == DefaultBatch) {
					t.Fatalf("sweep %d: more=%v with n=%d", i, more, n)
				}
			}
			st, ok := r.Peer()
			if ok != tc.wantPeer || (ok && st != (Status{Exited: true, Code: 7})) {
				t.Fatalf("peer status %+v ok=%v", st, ok)
			}
			if r.Reaped() != tc.wantTotal {
				t.Fatalf("reaped %d, want %d", r.Reaped(), tc.wantTotal)
			}
		})
	}
}

// CheckPeer finds the peer's exit even when orphans queue before it.
func TestCheckPeerBypassesTheBacklog(t *testing.T) {
	f := &fakeWaiter{status: map[int]Status{42: {Signal: 9}}, live: 1}
	for i := 0; i < 500; i++ {
		f.exited = append(f.exited, 1000+i)
	}
	f.exited = append(f.exited, 42)
	r := &Reaper{w: f, batch: DefaultBatch}
	r.SetPeer(42)
	r.Sweep()
	if _, ok := r.Peer(); ok {
		t.Fatal("peer collected by the first bounded sweep")
	}
	st, ok := r.CheckPeer()
	if !ok || st.Exited || st.Signal != 9 {
		t.Fatalf("CheckPeer = %+v, %v", st, ok)
	}
	// The peer is collected once: later sweeps never see it again.
	for {
		if _, more := r.Sweep(); !more {
			break
		}
	}
	if r.Reaped() != 501 {
		t.Fatalf("reaped %d, want 501", r.Reaped())
	}
}
