// Package cri runs the Pod that `loki-supervise pod-spec` prints through a
// private containerd's CRI, the way a kubelet does (RunPodSandbox, the
// init containers in order, the native sidecar, CreateContainer with the
// spec's mounts and security context, StopContainer and StopPodSandbox),
// with `loki-supervise attach` as the session's owner over the CRI
// streaming server. Exit codes, byte-exact stdio, the owner's and the
// holder's deaths, a graceful stop and the Pod's confinement are checked.
package cri
