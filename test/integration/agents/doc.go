// Package agents runs the real coding agents from npm (test/agents)
// through the default session and compares each conversation with the
// agent run directly, on the layouts users have: HOME 0700 and 0755 with
// the project inside it, HOME under /tmp, as root and as an unprivileged
// user. It needs node and npm and the npm registry (npm ci, once).
package agents
