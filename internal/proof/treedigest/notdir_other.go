//go:build !unix

package treedigest

func isNotDir(error) bool { return false }
