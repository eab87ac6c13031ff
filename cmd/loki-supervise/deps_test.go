package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSupervisorLinksNoKubernetes keeps the Kubernetes, CRI, gRPC and
// protobuf modules out of loki-supervise: their package inits (protobuf's
// alone hashes the executable) ran at every session start, before the
// namespace stage. pod-spec and attach, their only users, are loki-kube's.
func TestSupervisorLinksNoKubernetes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 50 {
		t.Fatalf("go list -deps named %d packages; the test cannot be trusted", len(pkgs))
	}
	for _, pkg := range pkgs {
		for _, banned := range []string{"k8s.io/", "sigs.k8s.io/", "google.golang.org/grpc", "google.golang.org/protobuf"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("loki-supervise depends on %s (it belongs in loki-kube)", pkg)
			}
		}
	}
}
