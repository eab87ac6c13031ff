// Package kubecli declares loki-supervise's two Kubernetes commands,
// pod-spec and attach (names, help, flags), without their actions. The
// actions link k8s.io/api, the CRI and gRPC, so they live in loki-kube;
// loki-supervise lists and documents the same declarations (--help, man
// page, completions) and execs loki-kube to run them. The help a user
// reads is thus the same from both binaries, and written once.
package kubecli
