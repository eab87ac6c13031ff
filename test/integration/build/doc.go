// Package build holds end-to-end tests of `loki-supervise build|run|stop|
// status|list|logs`: the real binary, real shell-script runners, real
// signals, and the record it leaves in $LOKI_DATA_DIR.
package build
