package cgroup

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/session/confine"
)

// ForSession makes the cgroup of the session whose scratch dir is scratch,
// limits written, before its first process exists, and records it there
// for CleanStale. Limits the user named are applied or refused with the
// fix; the default pids limit alone, on a host that gives this user no
// cgroup, is reported through warn (when not nil) and skipped. nil when
// there is nothing to apply.
func ForSession(scratch string, r confine.Resources, warn func(string)) (*Cgroup, error) {
	if !r.Any() {
		return nil, nil
	}
	host, err := Detect()
	var cg *Cgroup
	if err == nil {
		if marker := sweepMarker(scratch, host); sweepDue(marker) {
			host.SweepEmpty()
			touch(marker)
		}
		cg, err = host.Create(Name(scratch), r)
		if err != nil && r.PidsMax == 0 && r.Asked() {
			// The limits asked for may be there without the default
			// pids limit's controller: that one alone is best effort.
			noPids := r
			noPids.PidsMax = confine.Unlimited
			if cg, err = host.Create(Name(scratch), noPids); err == nil && warn != nil {
				warn("default pids limit not applied: no pids cgroup controller usable here (see loki-supervise doctor)")
			}
		}
	}
	if err == nil {
		if err = cg.Record(scratch); err != nil {
			cg.Remove()
		}
	}
	switch {
	case err == nil:
		return cg, nil
	case !r.Asked() && errors.Is(err, ErrUnavailable):
		if warn != nil {
			warn(fmt.Sprintf("default pids limit not applied: %v (see loki-supervise doctor)", err))
		}
		return nil, nil
	case os.Geteuid() != 0:
		return nil, fmt.Errorf("%v; run as root or in a delegated cgroup (loki-supervise doctor), or drop the limit", err)
	}
	return nil, fmt.Errorf("%v; drop the limit or fix the host's cgroups (loki-supervise doctor)", err)
}

// sweepMarker is the file in the control root holding scratch (a
// session's ControlRoot/session-*/scratch) whose mtime says when a
// session of that root last swept host's session cgroups: a sweep
// removes only those empty for staleAge, so a second one within staleAge
// finds nothing the first did not (it only waits for the next), and
// reading the hierarchies costs every session start a tenth of a
// millisecond. One marker per set of swept dirs.
func sweepMarker(scratch string, host Host) string {
	h := fnv.New32a()
	h.Write([]byte(strings.Join(host.sweepParents(), "\x00")))
	return filepath.Join(filepath.Dir(filepath.Dir(scratch)), fmt.Sprintf("cgroup-sweep-%08x", h.Sum32()))
}

// sweepDue: no marker, not a plain file, or one older than staleAge (or
// from the future: a clock set back).
func sweepDue(marker string) bool {
	fi, err := os.Lstat(marker)
	if err != nil || !fi.Mode().IsRegular() {
		return true
	}
	age := time.Since(fi.ModTime())
	return age >= staleAge || age < 0
}

// touch makes marker (0600, empty) or marks it modified now (O_TRUNC
// does, whatever its size); best effort: a marker that cannot be written
// leaves every start sweeping, as before.
func touch(marker string) {
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600); err == nil {
		f.Close()
	}
}
