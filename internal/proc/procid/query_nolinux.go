//go:build !linux

package procid

// procStat: StateLetter asks ps here (macOS's letters are ps's, not the
// kernel's p_stat).
const procStat = false
