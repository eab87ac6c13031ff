package proof

import (
	"slices"

	"github.com/loki-sh/loki/internal/canonjson"
)

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, canonjson.Compare)
	return keys
}
