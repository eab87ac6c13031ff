// Package dashboard tests loki-supervise as a drop-in for the reference
// supervisor module a dashboard drives: its command line (the reference's
// argv, argparse's answers to bad ones) and one command per function the
// dashboard imports (identity, auth-status, update-state, proc
// token|matches|state). The dashboard's call sequence runs against loki
// and, where the reference (build_supervisor.py, outside this repository:
// $LOKI_REFERENCE_SUPERVISOR, default /work/shared/seeds) is present,
// against the reference too with stub helpers written at test time, and
// the answers must be equal. Without the reference the loki side is still
// checked against values the test computes itself.
package dashboard
