//go:build unix

package treedigest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loki-sh/loki/internal/safefile"
)

// Entry kinds, as they appear in the manifest.
const (
	kindMissing    = "missing"
	kindUnreadable = "unreadable"
	kindFile       = "file"
	kindSymlink    = "symlink"
	kindOther      = "other"
	kindGitlink    = "gitlink"
)

// bufSize is the read buffer of one worker: a file is never held whole.
const bufSize = 256 << 10

// tree is one digest in progress: the root, its index and what the walk
// learnt, shared read-only by the workers (parents is a cache guarded by
// its own lock).
type tree struct {
	d          *Options
	root       string
	depth      int
	budget     *budget
	index      map[string][]indexEntry
	gitlinks   map[string]bool
	unreadable map[string]bool

	mu      sync.Mutex
	parents map[string]string // dir rel path -> "" (real dir), kindMissing or kindUnreadable
}

func isExecutable(m fs.FileMode) bool { return m.Perm()&0o111 != 0 }

func statusEntry(rel, kind string) map[string]any {
	return map[string]any{"path": rel, "kind": kind}
}

// entry describes one path. A non-nil error is fatal to the digest (a
// cancelled context, a git failure inside a submodule); everything the
// file system can do to a single path is expressed as a kind instead.
func (t *tree) entry(ctx context.Context, rel string, buf []byte) (map[string]any, error) {
	if t.gitlinks[rel] {
		return t.gitlinkEntry(ctx, rel)
	}
	if t.unreadable[rel] {
		return statusEntry(rel, kindUnreadable), nil
	}
	if k := t.parentKind(rel); k != "" {
		return statusEntry(rel, k), nil
	}
	full := t.abs(rel)
	fi, err := os.Lstat(full)
	if err != nil {
		return statusEntry(rel, lstatKind(err)), nil
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		// Only index paths can be directories here: the file git tracks
		// is not on disk (git status says "deleted" too).
		return statusEntry(rel, kindMissing), nil
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return statusEntry(rel, lstatKind(err)), nil
		}
		sum := sha256.Sum256([]byte(target))
		return contentEntry(rel, kindSymlink, m, int64(len(target)), hex.EncodeToString(sum[:])), nil
	case m.IsRegular():
		return t.fileEntry(ctx, rel, full, buf)
	default:
		return map[string]any{"path": rel, "kind": kindOther, "executable": isExecutable(m), "size": fi.Size()}, nil
	}
}

func contentEntry(rel, kind string, m fs.FileMode, size int64, sum string) map[string]any {
	return map[string]any{"path": rel, "kind": kind, "executable": isExecutable(m), "size": size, "sha256": sum}
}

// lstatKind maps a stat failure: an absent path (or one below a
// non-directory) is missing, anything else unreadable.
func lstatKind(err error) string {
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return kindMissing
	}
	return kindUnreadable
}

func (t *tree) abs(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

// fileEntry streams a regular file through buf. The file is opened without
// following a final symlink and without blocking (a FIFO swapped in after
// the lstat must not hang the digest); mode and size come from the open
// file, so they describe the bytes that were hashed.
func (t *tree) fileEntry(ctx context.Context, rel, full string, buf []byte) (map[string]any, error) {
	f, err := safefile.Open(full)
	if err != nil {
		return statusEntry(rel, lstatKind(err)), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return statusEntry(rel, kindUnreadable), nil
	}
	if !fi.Mode().IsRegular() {
		return map[string]any{"path": rel, "kind": kindOther, "executable": isExecutable(fi.Mode()), "size": fi.Size()}, nil
	}
	// The size is spent before a byte is read, so a huge (sparse) file
	// ends the digest at once; growth while it is read is spent too.
	if err := t.budget.take(fi.Size()); err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := copyCtx(ctx, h, f, buf, t.budget, fi.Size())
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return statusEntry(rel, kindUnreadable), nil
	}
	return contentEntry(rel, kindFile, fi.Mode(), n, hex.EncodeToString(h.Sum(nil))), nil
}

// copyCtx streams r into w through buf; bytes read beyond spent (what
// was taken from b already) are taken as they come.
func copyCtx(ctx context.Context, w io.Writer, r io.Reader, buf []byte, b *budget, spent int64) (int64, error) {
	var n int64
	for {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		k, err := r.Read(buf)
		if k > 0 {
			w.Write(buf[:k]) // hash.Hash never fails
			n += int64(k)
			if n > spent {
				if err := b.take(n - spent); err != nil {
					return n, err
				}
				spent = n
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// parentKind checks every directory above rel: each must be a real
// directory, not a symlink. A path reached through a symlink is not in
// this tree (git agrees), so it is missing; this is also what keeps the
// digest from reading outside the work tree.
func (t *tree) parentKind(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ""
	}
	return t.dirKind(rel[:i])
}

func (t *tree) dirKind(dir string) string {
	t.mu.Lock()
	k, ok := t.parents[dir]
	t.mu.Unlock()
	if ok {
		return k
	}
	k = t.parentKind(dir)
	if k == "" {
		fi, err := os.Lstat(t.abs(dir))
		switch {
		case err != nil:
			k = lstatKind(err)
		case !fi.IsDir():
			k = kindMissing
		}
	}
	t.mu.Lock()
	t.parents[dir] = k
	t.mu.Unlock()
	return k
}

// gitlinkEntry describes a submodule: its index entries, the commit its
// checkout is at and the digest of that checkout ("" for both when it is
// not checked out).
func (t *tree) gitlinkEntry(ctx context.Context, rel string) (map[string]any, error) {
	stages := slices.Clone(t.index[rel])
	slices.SortFunc(stages, func(a, b indexEntry) int {
		if a.stage != b.stage {
			return a.stage - b.stage
		}
		return strings.Compare(a.oid, b.oid)
	})
	index := make([]any, 0, len(stages))
	for _, s := range stages {
		index = append(index, map[string]any{"stage": s.stage, "oid": s.oid})
	}
	e := map[string]any{"path": rel, "kind": kindGitlink, "index": index, "head_oid": "", "worktree_sha256": ""}
	if t.parentKind(rel) != "" {
		return e, nil
	}
	sub := t.abs(rel)
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		return e, nil
	}
	g := t.d.git()
	top, err := g.isTop(ctx, sub)
	if err != nil || !top {
		return e, err
	}
	if e["head_oid"], err = g.headOID(ctx, sub); err != nil {
		return nil, err
	}
	if e["worktree_sha256"], err = t.d.digest(ctx, sub, t.depth+1, t.budget); err != nil {
		return nil, err
	}
	return e, nil
}
