//go:build unix

package treedigest

import "errors"

var (
	// ErrNotWorkTree: the directory is not the top level of a git work tree.
	ErrNotWorkTree = errors.New("not the top level of a git work tree")
	// ErrGit: git could not be run or failed in an unexpected way.
	ErrGit = errors.New("git failed")
	// ErrTooLarge: the tree holds more file content than Options.MaxBytes.
	ErrTooLarge = errors.New("work tree too large to digest")
	// ErrTooDeep: submodules nest deeper than MaxSubmoduleDepth.
	ErrTooDeep = errors.New("submodules nested too deeply")
)
