//go:build !unix

package treedigest

import "os"

// openNoFollow falls back to a plain open where O_NOFOLLOW does not exist;
// the lstat before it has already refused symlinks.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

func isNotDir(error) bool { return false }
