//go:build linux

package pid1

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/loki-sh/loki/internal/pid1/pid1test"
)

// A peer that exits nonzero at the very moment hundreds of orphans exit
// gives the init its own code: the peer's status is neither lost nor
// hidden behind the reaper's bounded sweeps (64 children per wake).
//
// The orphans are cats reading a FIFO whose only writer is the peer: they
// all reach end of file when the peer's exit closes it, so their exits and
// the peer's land together.
func TestPeerCodeSurvivesOrphanBacklog(t *testing.T) {
	t.Parallel()
	const n = 400
	fifo := filepath.Join(markerDir(t), "fifo")
	script := `mkfifo "$1"
i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do (cat "$1" </dev/null >/dev/null 2>&1 &); i=$((i+1)); done
# Every cat must be blocked opening the FIFO before the peer opens it.
tries=0
while [ "$(grep -l '^Name:[[:space:]]*cat$' /proc/[0-9]*/status 2>/dev/null | wc -l)" -lt ` + strconv.Itoa(n) + ` ]; do
  tries=$((tries+1)); if [ $tries -gt 1200 ]; then echo "cats did not start" >&2; exit 99; fi
  sleep 0.05
done
exec 3>"$1"
echo released
exit 7`
	s := start(t, pid1test.Config{Spec: shell(script, fifo), KeepStdinOpen: true})
	r := s.Wait(2 * waitLong)
	requireCode(t, r, 7)
	if string(r.Stdout) != "released\n" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	pid1test.RequireGone(t, s.Namespace(), waitShort)
}
