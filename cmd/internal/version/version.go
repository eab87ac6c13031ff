package version

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set with -ldflags -X by the Makefile, for builds where the toolchain
// stamped no VCS information (-buildvcs=false, a git worktree).
var (
	version string
	commit  string
	dirty   string
)

// Info is one build's identity.
type Info struct {
	Program    string `json:"program"`
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Dirty      bool   `json:"dirty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// Read returns the running binary's Info.
func Read(program string) Info {
	bi, ok := debug.ReadBuildInfo()
	return fromBuildInfo(program, bi, ok)
}

func fromBuildInfo(program string, bi *debug.BuildInfo, ok bool) Info {
	i := Info{Program: program, Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if version != "" {
		i.Version = version
	}
	i.Commit, i.Dirty = commit, dirty == "true"
	if !ok || bi == nil {
		return i
	}
	if v := bi.Main.Version; v != "" && (v != "(devel)" || version == "") {
		i.Version = v
	}
	if bi.GoVersion != "" {
		i.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
			i.Dirty = false // vcs.modified, next, says
		case "vcs.time":
			i.CommitTime = s.Value
		case "vcs.modified":
			i.Dirty = s.Value == "true"
		}
	}
	// Go marks a dirty tree in the version too; say it once, in Dirty.
	i.Version = strings.TrimSuffix(i.Version, "+dirty")
	return i
}

// String is the one line --version prints.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", i.Program, i.Version)
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		fmt.Fprintf(&b, " (commit %s", c)
		if i.Dirty {
			b.WriteString(", dirty tree")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s", i.Go, i.Platform)
	return b.String()
}

// JSON is the object --version --json prints, one line.
func (i Info) JSON() string {
	b, _ := json.Marshal(i) // a struct of strings and a bool cannot fail
	return string(b)
}
