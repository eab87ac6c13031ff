package procid

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
)

var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
})

// Stat parses /proc/PID/stat. The command name may contain spaces and
// parentheses, so fields are taken after the last ')'.
func Stat(pid int) (Status, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Status{}, fmt.Errorf("procid: pid %d: %w: %w", pid, ErrGone, err)
	}
	return ParseStat(b)
}

// ParseStat parses the contents of a /proc/PID/stat file (of any proc
// mount: the lineage tracker reads its own).
func ParseStat(b []byte) (Status, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Status{}, fmt.Errorf("procid: malformed stat")
	}
	f := bytes.Fields(b[i+1:])
	// After ')': state(0) ppid(1) pgrp(2) session(3) ... flags(6) ...
	// starttime(19).
	if len(f) < 20 || len(f[0]) != 1 {
		return Status{}, fmt.Errorf("procid: malformed stat")
	}
	var st Status
	st.State = f[0][0]
	var err error
	if st.PPID, err = strconv.Atoi(string(f[1])); err != nil {
		return Status{}, fmt.Errorf("procid: malformed stat ppid")
	}
	if st.PGID, err = strconv.Atoi(string(f[2])); err != nil {
		return Status{}, fmt.Errorf("procid: malformed stat pgrp")
	}
	if st.SID, err = strconv.Atoi(string(f[3])); err != nil {
		return Status{}, fmt.Errorf("procid: malformed stat session")
	}
	if st.Flags, err = strconv.ParseUint(string(f[6]), 10, 64); err != nil {
		return Status{}, fmt.Errorf("procid: malformed stat flags")
	}
	if st.Start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return Status{}, fmt.Errorf("procid: malformed stat starttime")
	}
	return st, nil
}

// BirthToken returns "proc:<boot_id>:<starttime>". With /proc unreadable it
// falls back to the imprecise ps token, as the reference does.
func BirthToken(pid int) (string, error) {
	st, err := Stat(pid)
	if err != nil {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return "", err // /proc works; the process is gone
		}
		return psToken(pid)
	}
	return "proc:" + bootID() + ":" + strconv.FormatUint(st.Start, 10), nil
}
