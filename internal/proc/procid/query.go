package procid

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The answers a dashboard used to get by importing the reference module
// (process_state, process_identity_matches): plain values, no Identity.

// TokenMatches reports whether pid is a live process this one may signal
// (signal 0 succeeds: a process of another user is no match), not a
// zombie, whose birth token is exactly token. Any token may match, even an
// imprecise "ps:" one; whether it authorises a signal is SignalSafe's
// question. This is the reference's process_identity_matches.
func TokenMatches(pid int, token string) bool {
	if token == "" || pid <= 0 || !signalable(pid) || StateLetter(pid) == "Z" {
		return false
	}
	tok, err := BirthToken(pid)
	return err == nil && tok == token
}

// StateLetter is the one-letter state the OS reports for pid ("R", "S",
// "Z", ...), or "" when there is no such process. On Linux it is
// /proc/PID/stat's; elsewhere `ps -o state=`'s first letter, as the
// reference reads it.
func StateLetter(pid int) string {
	if pid <= 0 {
		return ""
	}
	if !procStat {
		return psState(pid)
	}
	st, err := Stat(pid)
	if err != nil {
		return ""
	}
	return string(st.State)
}

func psState(pid int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "ps", "-o", "state=", "-p", strconv.Itoa(pid)).Output()
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	return s[:1]
}
