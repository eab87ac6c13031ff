// Package egress is a session's way out when it has no network of its
// own to the world: an allowlist of destinations (DNS names, with
// "*.suffix" for subdomains, or IP literals, each with an optional port)
// and an HTTP proxy on the host side that serves the peer's CONNECT
// tunnels and plain-HTTP requests to those destinations only.
//
// Guarantees:
//   - a destination reaches the network only if a rule names it: the
//     host name the client asked for (never an address it resolved
//     itself, which the proxy would have to trust) is matched, case- and
//     trailing-dot-insensitively, and its port must be the rule's (443
//     and 80 when the rule names none);
//   - anything else is answered 403 with one line naming the
//     destination and the flag, and the first refusal of each of the
//     first few destinations is reported to the supervisor's notes (the
//     rest are counted in one line at Close); no connection to it is
//     made;
//   - what the peer can make the proxy hold is bounded, since it runs in
//     the supervisor, outside every limit of the session: a request
//     header of 64 KiB (431 beyond), 256 client connections open at once
//     (503 beyond, nothing read), 10 s to send a request, and a tunnel
//     or forwarded request ends after 10 minutes without a byte either
//     way;
//   - the proxy listens where it is handed a listener: the namespace
//     backend creates it inside the session's own network namespace, so
//     the peer, which has no other route, reaches the proxy and nothing
//     else; Close stops the listener and every tunnel.
//
// The allowlist is by name: a name the rules allow may resolve to any
// address, the host's loopback included, and what the destination does
// with the bytes is its own affair (TLS stays end to end).
package egress
