// Package sessionflags is the session's command line: its flags and the
// parsers that turn them into a confinement policy, an EOF rule and
// timings. loki-supervise (session, oci-spec) and loki-kube (pod-spec)
// both take them from here, so a Pod is asked for with exactly the flags
// a session takes, and a flag a Pod cannot express is seen and refused,
// never dropped. It links no Kubernetes code.
package sessionflags
