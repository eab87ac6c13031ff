package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/cmd/internal/kubecli"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session/doctor"
)

// kubeBinary runs pod-spec and attach: their code links k8s.io/api, the
// CRI and gRPC, whose package inits every session start would otherwise
// pay (docs/cluster.md).
const kubeBinary = "loki-kube"

// errKubeMissing is a loki-kube that is not next to this binary.
var errKubeMissing = errors.New("needs " + kubeBinary + " next to loki-supervise")

// kubeCommands are pod-spec and attach as declared in kubecli, so that
// --help, the man page and the completions list them with their flags;
// running one execs loki-kube with the command line untouched (flags
// included, --help too: it answers with the same declaration).
func kubeCommands() (podSpec, attach *cli.Command) {
	podSpec, attach = kubecli.PodSpec(), kubecli.Attach()
	for _, c := range []*cli.Command{podSpec, attach} {
		c.SkipFlagParsing = true
		c.Action = func(ctx *cli.Context) error {
			return execKube(ctx, append([]string{ctx.Command.Name}, ctx.Args().Slice()...))
		}
	}
	return podSpec, attach
}

// execKube replaces this process by the loki-kube next to this
// executable (its resolved path, /proc/self/exe on Linux), never one
// found on PATH, which anyone who can write a PATH directory could plant.
// Its argv[0] is loki-supervise: its messages and help read as ours.
// Without it, --help is still answered here, from the same declaration.
func execKube(ctx *cli.Context, args []string) error {
	path, err := kubePath()
	if err != nil {
		return notLaunched(fmt.Errorf("%s: %w: cannot resolve this executable: %v", ctx.Command.Name, errKubeMissing, err))
	}
	execErr := syscall.Exec(path, append([]string{"loki-supervise"}, args...), os.Environ())
	if wantsHelp(args[1:]) {
		return cli.ShowSubcommandHelp(ctx)
	}
	err = fmt.Errorf("%s: %w (%s: %v): install it beside loki-supervise, from the same release tarball (or make build's bin/)",
		ctx.Command.Name, errKubeMissing, path, execErr)
	if errors.Is(execErr, syscall.ENOENT) {
		return notLaunched(err)
	}
	return exitcode.CannotExecute(err)
}

// wantsHelp is a command line that asks for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}

// kubePath is where loki-kube must be: beside this executable's
// resolved path.
func kubePath() (string, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(self), kubeBinary), nil
}

// kubeCheck is doctor's item for the sibling binary: optional, since
// only pod-spec and attach need it.
func kubeCheck() doctor.Check {
	c := doctor.Check{Name: kubeBinary,
		Fix: "install " + kubeBinary + " beside loki-supervise, from the same release tarball (or make build's bin/), for pod-spec and attach"}
	path, err := kubePath()
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(path); err == nil && (!st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0) {
			err = errors.New("not an executable file")
		}
	}
	var pe *os.PathError
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.Detail = "missing: " + path
		return c
	case errors.As(err, &pe):
		c.Detail = fmt.Sprintf("%s: %v", path, pe.Err)
		return c
	case err != nil:
		c.Detail = fmt.Sprintf("%s: %v", path, err)
		return c
	}
	c.OK, c.Detail = true, path+" (pod-spec, attach)"
	return c
}
