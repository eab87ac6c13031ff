// Package proof holds end-to-end tests of `loki-supervise digest` and
// `loki-supervise verify-proof`: the built binary, real git repositories,
// real receipts, and (as root) a digest run under an unprivileged uid so
// that unreadable entries are real.
package proof
