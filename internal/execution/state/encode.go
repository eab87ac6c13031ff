//go:build unix

package state

import (
	"fmt"

	"github.com/loki-sh/loki/internal/canonjson"
)

// encode renders a record like Python's json.dumps(state, sort_keys=True,
// indent=2, ensure_ascii=True) followed by a newline, which is what the
// dashboard's reader was written against.
func encode(st State) ([]byte, error) {
	b, err := canonjson.MarshalIndent(map[string]any(st))
	if err != nil {
		return nil, fmt.Errorf("state: encode: %w", err)
	}
	return append(b, '\n'), nil
}
