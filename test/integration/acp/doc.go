// Package acp proves that loki is invisible to the Agent Client Protocol: a
// real ACP agent and client, both built on the official SDK from the npm
// registry (test/acp), hold the same conversation once with the client
// spawning the agent itself and once through `loki-supervise session` on
// every backend, and the recorded transcripts (every JSON-RPC line both
// ways, the session id normalised), the agent's stderr and its exit code
// must be identical byte for byte. The tests need node and npm (CI has
// them) and root for the namespace and oci backends.
package acp
