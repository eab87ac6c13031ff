//go:build !unix

package provider

import (
	"os/exec"
	"time"
)

func killGroupOnCancel(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }
