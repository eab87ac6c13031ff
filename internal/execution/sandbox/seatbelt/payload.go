//go:build unix

package seatbelt

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// Exit codes of the probe payload: 0 when every check came out as the
// profile promises, 1 when something that must work did not, and one code
// per thing that must be refused but was allowed.
const (
	PayloadOK            = 0
	PayloadBrokenAllow   = 1
	PayloadUsage         = 2
	PayloadSiblingRead   = 41
	PayloadUnixConnect   = 42
	PayloadReservedBind  = 43
	payloadChildWaitTime = 2 * time.Second
)

// RunPayload performs the six kernel checks from inside the sandbox, in
// this order: write OUTPUT in the workspace, read /etc/hosts, start a shell
// in a new process group and kill that group, fail to read SIBLING, fail
// to connect to the unix socket UNIX, and fail to bind 127.0.0.1:PORT with
// a permission error. args are OUTPUT SIBLING UNIX PORT. It returns the
// exit code for the process.
func RunPayload(args []string) int {
	if len(args) != 4 {
		return PayloadUsage
	}
	output, sibling, unixPath, port := args[0], args[1], args[2], args[3]
	if _, err := strconv.Atoi(port); err != nil {
		return PayloadUsage
	}
	if os.WriteFile(output, []byte("confined"), 0o600) != nil {
		return PayloadBrokenAllow
	}
	if readable("/etc/hosts") != nil {
		return PayloadBrokenAllow
	}
	if killOwnGroup(payloadChildWaitTime) != nil {
		return PayloadBrokenAllow
	}
	if readable(sibling) == nil {
		return PayloadSiblingRead
	}
	if c, err := net.DialTimeout("unix", unixPath, 5*time.Second); err == nil {
		c.Close()
		return PayloadUnixConnect
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err == nil {
		ln.Close()
		return PayloadReservedBind
	}
	if !isPermission(err) {
		return PayloadBrokenAllow
	}
	return PayloadOK
}

// readable opens path and reads one byte; an empty file counts as read.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
