//go:build unix && !linux

package procid

// pidInode has no equivalent here: identities rest on birth tokens alone.
func pidInode(int) uint64 { return 0 }
