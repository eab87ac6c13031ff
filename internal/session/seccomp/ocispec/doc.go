// Package ocispec renders the session's syscall policy (package seccomp)
// as runtime-spec's linux.seccomp, which is also the JSON of a Docker
// seccomp profile: the oci backend writes it into its config, the docker
// backend hands it to the engine. It is apart from package seccomp so
// that loki-init, which links that one, does not link runtime-spec.
//
// Guarantee: Seccomp is seccomp.Policy rule for rule, in order, each with
// its errno, each condition "(arg & mask) == value" as libseccomp's
// masked compare (value the mask, valueTwo the datum).
package ocispec
