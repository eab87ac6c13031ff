//go:build !unix

package seatbelt

import (
	"errors"
	"os/exec"
	"time"
)

var errNoProcessGroups = errors.New("seatbelt: process groups are unsupported on this system")

func killOwnGroup(time.Duration) error { return errNoProcessGroups }

func isPermission(error) bool { return false }

func killGroupOnCancel(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }
