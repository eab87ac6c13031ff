package suggest

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// FlagError says what was wrong with a flag, naming the nearest flag
// when it was an unknown one.
func FlagError(flags []cli.Flag, err error) string {
	bad, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	bad = strings.TrimLeft(bad, "-")
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	if s := Nearest(bad, names); s != "" {
		return fmt.Sprintf("unknown flag --%s: did you mean --%s?", bad, s)
	}
	return fmt.Sprintf("unknown flag --%s", bad)
}

// Nearest is the candidate within two edits of s (or the one s is a
// prefix of), or "" when none is that close: a far guess misleads.
func Nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(s, c)
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
