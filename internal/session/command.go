//go:build unix

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/launch"
)

// defaultPath is loki-init's search path for a launch env without PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// CheckCommand refuses, before anything starts, a peer command that is
// not on the host at all, for backends whose peer sees the host's files
// (namespace, none). loki-init would refuse it with the same code, 125
// (Contract 3), but its line names no command, since it never prints
// launch data; this line names the command (argv[0] only, never the
// arguments or the env). Only a name found nowhere is refused: whether
// the peer may execute what is there is left to the init, which runs
// with the peer's ids and view.
func CheckCommand(s launch.Spec) error {
	if len(s.Argv) == 0 {
		return nil
	}
	name := s.Argv[0]
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Cwd, p)
		}
		if !isFile(p) {
			return notFound(name, "no such file")
		}
		return nil
	}
	search, ok := s.Env["PATH"]
	if !ok {
		search = defaultPath
	}
	for _, dir := range filepath.SplitList(search) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.Cwd, dir)
		}
		if isFile(filepath.Join(dir, name)) {
			return nil
		}
	}
	return notFound(name, "not found on the agent's PATH")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func notFound(name, why string) error {
	return exitcode.Refused(fmt.Errorf("ACP supervisor refused at peer-spawn: %w: %s: %s", launch.ErrNotExecutable, name, why))
}
