// Package containerd runs the config that `loki-supervise oci-spec`
// prints through a real containerd (ctr run --config), with the test as
// the lease holder and prelude writer: the cluster pattern of
// docs/cluster.md without Kubernetes. Exit codes, byte-exact stdio and
// lease expiry are checked.
package containerd
