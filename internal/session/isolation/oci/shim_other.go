//go:build !linux

package oci

import (
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/loki-sh/loki/internal/exitcode"
)

// ShimCommand is the hidden loki-supervise subcommand (Linux only).
const ShimCommand = "__oci-cgroup-shim"

func shimAttr() *syscall.SysProcAttr { return nil }
func needsHybridShim() bool          { return false }
func PidsControllerAvailable() bool  { return false }

// RunShim is unsupported outside Linux.
func RunShim([]string) error { return exitcode.NotLaunched(nil) }

func makeMountPoints(string, []specs.Mount) error { return nil }
