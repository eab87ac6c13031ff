//go:build !unix

package procid

func signalable(int) bool { return false }
