package pid1

import (
	"runtime"
	"sync"
)

// spareThreads is how many OS threads loki-init starts before it spawns
// the peer and keeps idle. The Go runtime treats a failed thread creation as
// fatal, and loki-init shares its session's pids limit with the peer: a
// fork bomb that fills --pids-max would otherwise kill the init with a
// runtime trace instead of leaving it to report the peer's outcome.
// Steady state is about 8 threads; idle ones are reused, never freed.
// Where the host puts the peer in a pids cgroup of its own
// (Config.PeerCgroupFD), the init is outside the limit and starts none.
const spareThreads = 12

// noThreads stands for reserveThreads' channel when none are reserved.
var noThreads = func() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// reserveThreads makes the runtime create n threads: n goroutines each
// locked to a thread of its own at once, then unlocked (an unlocked
// thread returns to the runtime's idle list; a locked one that exits
// would be destroyed). It works while the init waits for the host's first
// renewal and the prelude; the returned channel is closed once all n
// exist, and the peer is spawned only after that.
func reserveThreads(n int) <-chan struct{} {
	ready := make(chan struct{})
	go func() {
		reserveThreadsNow(n)
		close(ready)
	}()
	return ready
}

func reserveThreadsNow(n int) {
	var locked, done sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
}
