// Package doctor finds out what confinement this host can give a
// session: namespaces (pid, mount, user, network), cgroup limits (which
// version, which controllers this user may use), Landlock, and the OCI
// runtimes and Docker engine the other backends need. Every fact comes
// from trying it (a namespace is cloned, a cgroup made and removed, the
// Landlock ABI asked of the kernel), not from guessing; each unavailable
// item carries a one-line fix. Run says whether the default session
// (`loki-supervise session -- CMD`) can run here.
package doctor
