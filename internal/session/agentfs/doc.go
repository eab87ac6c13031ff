// Package agentfs decides which of a user's files a confined agent may
// write besides its cwd and --write, and which it may not even there.
//
// State: the directories and files known agents keep their login,
// history, settings and caches in (~/.claude, ~/.claude.json, ~/.gemini,
// ~/.codex, ~/.npm) are writable in place, so they persist from one
// session to the next exactly as without loki: the same inode the agent
// run directly uses, never a copy (a copy-on-write layer would make a
// rotating OAuth refresh token diverge from the host's). Those that exist
// are writable for every agent; those of an agent named by the command
// are created first (dirs 0700, files 0600, owned by the HOME's owner).
//
// Protected: files that run as code later, outside the session (shell
// startup files, ~/.ssh, ~/.gnupg, git's config and hooks, the agents'
// hook and MCP settings) stay read-only even inside a writable path,
// unless --write names that very path. A protected path that does not
// exist is listed, and made as an empty placeholder where that means the
// same as none (so that it can be covered); see Plan.
//
// The package only plans and prepares host paths; the backends mount.
package agentfs
