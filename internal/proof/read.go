package proof

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loki-sh/loki/internal/safefile"
)

// MaxReceiptSize bounds what is read of a receipt or its signature.
const MaxReceiptSize = 16 << 20

// readLimited reads a regular file without following a final symlink,
// without blocking on a FIFO, and refusing more than MaxReceiptSize.
func readLimited(path string) ([]byte, error) {
	f, err := safefile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxReceiptSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if len(b) > MaxReceiptSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrUnreadable, path, MaxReceiptSize)
	}
	return b, nil
}

// realDirs checks that base/parts[0], base/parts[0]/parts[1], ... are real
// directories, not symlinks: the receipt path is built inside an
// agent-writable tree and must not be redirected elsewhere.
func realDirs(base string, parts ...string) error {
	p := base
	for _, part := range parts {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", p)
		}
	}
	return nil
}
