//go:build !linux

package doctor

import "os"

// Run off Linux: no namespace, cgroup or Landlock; the default backend
// there is none, which needs nothing.
func Run(string, []string) Report {
	r := Report{UID: os.Geteuid(), DefaultSession: true, CgroupVersion: "none"}
	r.add(Check{Name: "namespaces", Detail: "Linux only: the default here is --isolation none", Fix: "run on Linux for --isolation namespace"})
	return r
}
