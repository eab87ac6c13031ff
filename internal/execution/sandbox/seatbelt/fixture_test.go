package seatbelt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt/seatbelttest"
)

func TestMain(m *testing.M) {
	// The probe tests run this test binary as the payload.
	if len(os.Args) > 1 && os.Args[1] == "seatbelt-payload" {
		os.Exit(RunPayload(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// newBoundary is the shared valid boundary (boundarytest) under a short
// root, since a probe's unix socket path below it must fit in sun_path,
// with ports reserved.
func newBoundary(t *testing.T, ports string) *boundarytest.Layout {
	t.Helper()
	b := boundarytest.New(t, seatbelttest.ShortRoot(t, "sb"))
	b.Env[boundary.EnvReservedPorts] = ports
	return b
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
