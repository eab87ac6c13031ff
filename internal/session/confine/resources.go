package confine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultPidsMax is the pids limit of a session that names none: enough
// for a build with parallel compilers and test runners, far below what
// exhausts a host's pid space (a fork bomb stops there).
const DefaultPidsMax = 4096

// MinPidsMax is the smallest --pids-max: room for the peer and a few
// children. Where loki-init stays outside the peer's count (the
// namespace backend on cgroup v1) nothing else counts.
const MinPidsMax = 8

// MinSharedPidsMax is the smallest --pids-max where loki-init shares the
// limit with the peer (a runtime placed it, or cgroup v2): its own
// threads (about 20 with its spare ones) count too, and the Go runtime
// dies when it cannot make one.
const MinSharedPidsMax = 32

// CheckShared refuses, for backend, a pids limit too small for a
// loki-init that shares it with the peer.
func (r Resources) CheckShared(backend string) error {
	if n := r.Pids(); n > 0 && n < MinSharedPidsMax {
		return Refuse(backend, fmt.Sprintf("--pids-max %d here (loki-init's own threads count against it)", n), fmt.Sprintf("use --pids-max %d or more", MinSharedPidsMax))
	}
	return nil
}

// Unlimited is the PidsMax of --pids-max max (or 0): no pids limit.
const Unlimited = -1

// CPUPeriod is the scheduling period (µs) a --cpu-max given as a
// fraction of CPUs is spread over: the kernel's and Docker's default.
const CPUPeriod = 100000

// The limits a session hit, as Exit.Limit reports them.
var (
	// ErrMemoryLimit: the kernel's OOM killer killed a process of the
	// session because its cgroup reached --memory-max.
	ErrMemoryLimit = errors.New("memory limit reached")
	// ErrPidsLimit: the kernel refused a fork because the session's
	// cgroup held --pids-max tasks.
	ErrPidsLimit = errors.New("pids limit reached")
)

// CPUMax is a CPU bandwidth limit: Quota µs of CPU time per Period µs
// (cgroup v2's cpu.max, v1's cfs_quota_us/cfs_period_us).
type CPUMax struct {
	Quota  int64  `json:"quota"`
	Period uint64 `json:"period"`
}

func (c CPUMax) String() string { return fmt.Sprintf("%d %d", c.Quota, c.Period) }

// CPUs is the limit as a number of CPUs (docker --cpus).
func (c CPUMax) CPUs() float64 { return float64(c.Quota) / float64(c.Period) }

// Resources are the session's cgroup limits. The zero value asks for
// nothing but the default pids limit.
type Resources struct {
	// PidsMax: > 0 a limit, 0 not given (DefaultPidsMax applies where
	// the backend has a cgroup), Unlimited for none.
	PidsMax int64 `json:"pidsMax,omitempty"`
	// MemoryMax in bytes, 0 for none. Swap is limited to 0 with it, so
	// the limit is the memory the session can use, not RAM plus swap.
	MemoryMax int64   `json:"memoryMax,omitempty"`
	CPU       *CPUMax `json:"cpu,omitempty"`
	// TmpSize in bytes caps each private tmpfs of the confined fs (/tmp,
	// /dev/shm); 0: DefaultTmpSize, or half of MemoryMax when smaller.
	TmpSize int64 `json:"tmpSize,omitempty"`
}

// DefaultTmpSize caps the private /tmp and /dev/shm when --tmp-size is
// not given: a build's temporary files fit, and a session no longer
// gets half the host's RAM for each (the kernel's tmpfs default).
const DefaultTmpSize = 512 << 20

// Tmp is the size of each private tmpfs: TmpSize, else DefaultTmpSize
// or half of MemoryMax when that is smaller, so that a full /tmp ends
// in ENOSPC, with memory left to the agent, rather than in an OOM kill
// (tmpfs pages are charged to the writer's memory cgroup).
func (r Resources) Tmp() int64 {
	if r.TmpSize > 0 {
		return r.TmpSize
	}
	if r.MemoryMax > 0 && r.MemoryMax/2 < DefaultTmpSize {
		return max(r.MemoryMax/2, 1<<20)
	}
	return DefaultTmpSize
}

// Asked reports whether the user named any limit (a backend that cannot
// apply one must then refuse; the default pids limit alone is best
// effort).
func (r Resources) Asked() bool { return r.PidsMax > 0 || r.MemoryMax > 0 || r.CPU != nil }

// Pids is the pids limit to apply: the default when none was given, 0
// for none.
func (r Resources) Pids() int64 {
	switch {
	case r.PidsMax == 0:
		return DefaultPidsMax
	case r.PidsMax < 0:
		return 0
	}
	return r.PidsMax
}

// Any reports whether there is a limit to apply at all.
func (r Resources) Any() bool { return r.Pids() > 0 || r.MemoryMax > 0 || r.CPU != nil }

// ParsePidsMax parses --pids-max: a count of at least MinPidsMax, or 0
// or "max" for no limit; "" is the default.
func ParsePidsMax(s string) (int64, error) {
	switch s {
	case "":
		return 0, nil
	case "max", "0":
		return Unlimited, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: --pids-max %q: want a positive number of tasks, or max", ErrPolicy, s)
	}
	if n < MinPidsMax {
		return 0, fmt.Errorf("%w: --pids-max %d: at least %d", ErrPolicy, n, MinPidsMax)
	}
	return n, nil
}

// ParseMemoryMax parses --memory-max: bytes, with an optional K, M, G or
// T suffix (powers of 1024; a trailing B or iB is allowed); "" or "max"
// for none. Below 1M no session can even start its init, so that is
// refused as a typo.
func ParseMemoryMax(s string) (int64, error) { return parseSize("memory-max", s) }

// ParseTmpSize parses --tmp-size as --memory-max; "" for the default.
func ParseTmpSize(s string) (int64, error) {
	if s == "max" {
		return 0, fmt.Errorf("%w: --tmp-size max: name a size (e.g. 2G); the default is %dM", ErrPolicy, DefaultTmpSize>>20)
	}
	return parseSize("tmp-size", s)
}

func parseSize(flag, s string) (int64, error) {
	if s == "" || s == "max" {
		return 0, nil
	}
	bad := fmt.Errorf("%w: --%s %q: want bytes with an optional K, M, G or T suffix (e.g. 512M), at least 1M", ErrPolicy, flag, s)
	num := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s), "B"), "I")
	mult := int64(1)
	if n := len(num); n > 0 {
		if i := strings.IndexByte("KMGT", num[n-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			num = num[:n-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult || n*mult < 1<<20 {
		return 0, bad
	}
	return n * mult, nil
}

// ParseCPUMax parses --cpu-max: a number of CPUs (0.5, 2), or "QUOTA
// PERIOD" in microseconds as cgroup v2's cpu.max writes it; "" or "max"
// for none.
func ParseCPUMax(s string) (*CPUMax, error) {
	if s == "" || s == "max" {
		return nil, nil
	}
	bad := fmt.Errorf("%w: --cpu-max %q: want a number of CPUs (e.g. 0.5) or \"QUOTA PERIOD\" in µs (1000 <= PERIOD <= 1000000, QUOTA >= 1000)", ErrPolicy, s)
	if q, p, ok := strings.Cut(strings.TrimSpace(s), " "); ok {
		quota, err1 := strconv.ParseInt(q, 10, 64)
		period, err2 := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err1 != nil || err2 != nil || quota < 1000 || period < 1000 || period > 1000000 {
			return nil, bad
		}
		return &CPUMax{Quota: quota, Period: period}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0.01 || f > 1<<20 {
		return nil, bad
	}
	return &CPUMax{Quota: int64(math.Round(f * CPUPeriod)), Period: CPUPeriod}, nil
}

// FormatBytes writes n as the shortest exact K/M/G form (64M, 1536K).
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// LimitError is a limit the session ran into (Err is ErrMemoryLimit or
// ErrPidsLimit) and how many times the kernel enforced it (processes
// killed, forks refused).
type LimitError struct {
	Err   error
	Count int64
	Msg   string // the line for people
}

func (e *LimitError) Error() string { return e.Msg }
func (e *LimitError) Unwrap() error { return e.Err }
