// Package hostile runs `loki-supervise run` under the Linux host boundary
// (LOKI_HOST_LANDLOCK=1, as root) against runners that attack the
// supervisor, the lineage, the proof and the boundary itself: each test
// is one attack of issue 38 that used to hold and must now fail.
package hostile
