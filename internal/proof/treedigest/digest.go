//go:build unix

package treedigest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loki-sh/loki/internal/canonjson"
)

// ManifestVersion is the manifest format this package writes.
const ManifestVersion = 3

// MaxSubmoduleDepth bounds submodule recursion.
const MaxSubmoduleDepth = 16

// DefaultGitTimeout bounds each git invocation.
const DefaultGitTimeout = 60 * time.Second

// DefaultMaxBytes bounds the file content one digest reads (submodules
// included): a runner can make a file of any apparent size for free
// (`truncate -s 1T`), and every byte of a content hash must be read, holes
// too. At the bound the digest fails with ErrTooLarge; it never describes
// less than the tree.
const DefaultMaxBytes = 16 << 30

// Options tunes a digest; the zero value is ready to use. None of the
// options changes the result.
type Options struct {
	// Workers is the number of paths described at once (hashing files
	// included); 0 means 2 × GOMAXPROCS, at least 4.
	Workers int
	// GitTimeout bounds each git call; 0 means DefaultGitTimeout.
	GitTimeout time.Duration
	// MaxBytes bounds the file content read; 0 means DefaultMaxBytes, a
	// negative value no bound. It changes no digest: over it there is
	// none (ErrTooLarge).
	MaxBytes int64
}

// Digest returns the manifest-v3 digest of root with default options: ""
// (and no error) when root is not the top of a git work tree.
func Digest(ctx context.Context, root string) (string, error) {
	return (&Options{}).Digest(ctx, root)
}

// Manifest returns the canonical JSON bytes whose SHA-256 is the digest,
// or ErrNotWorkTree.
func Manifest(ctx context.Context, root string) ([]byte, error) {
	return (&Options{}).Manifest(ctx, root)
}

// Digest is the package-level Digest with these options.
func (o *Options) Digest(ctx context.Context, root string) (string, error) {
	return o.digest(ctx, root, 0, o.budget())
}

// Manifest is the package-level Manifest with these options.
func (o *Options) Manifest(ctx context.Context, root string) ([]byte, error) {
	return o.manifest(ctx, root, 0, o.budget())
}

func (o *Options) digest(ctx context.Context, root string, depth int, b *budget) (string, error) {
	m, err := o.manifest(ctx, root, depth, b)
	if err == ErrNotWorkTree {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return SumHex(m), nil
}

func (o *Options) git() gitRunner {
	t := o.GitTimeout
	if t <= 0 {
		t = DefaultGitTimeout
	}
	return gitRunner{timeout: t, env: gitEnv()}
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return max(4, 2*runtime.GOMAXPROCS(0))
}

func (o *Options) manifest(ctx context.Context, root string, depth int, b *budget) ([]byte, error) {
	if depth > MaxSubmoduleDepth {
		return nil, fmt.Errorf("%w: %s", ErrTooDeep, root)
	}
	g := o.git()
	top, err := g.isTop(ctx, root)
	if err != nil {
		return nil, err
	}
	if !top {
		return nil, ErrNotWorkTree
	}
	t, paths, err := o.scan(ctx, root, depth, b)
	if err != nil {
		return nil, err
	}
	entries, err := o.describe(ctx, t, paths)
	if err != nil {
		return nil, err
	}
	return canonjson.Marshal(map[string]any{
		"version": ManifestVersion,
		"filesystem_walk_excluded_top_level_directories": excludedTopLevel,
		"excluded_walk_directories":                      excludedAnyDepth,
		"entries":                                        entries,
	})
}

// scan reads the index and walks the disk, returning the sorted path set.
func (o *Options) scan(ctx context.Context, root string, depth int, b *budget) (*tree, []string, error) {
	idx, err := o.git().index(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	t := &tree{d: o, root: root, depth: depth, budget: b, index: idx, gitlinks: map[string]bool{}, parents: map[string]string{}}
	for p, es := range idx {
		for _, e := range es {
			if e.mode == gitlinkMode {
				t.gitlinks[p] = true
			}
		}
	}
	walked, unreadable, err := walk(root, t.gitlinks)
	if err != nil {
		return nil, nil, fmt.Errorf("walk %s: %w", root, err)
	}
	t.unreadable = unreadable
	set := make(map[string]struct{}, len(idx)+len(walked))
	for p := range idx {
		set[p] = struct{}{}
	}
	for _, p := range walked {
		set[p] = struct{}{}
	}
	for p := range unreadable {
		set[p] = struct{}{}
	}
	paths := make([]string, 0, len(set))
	for p := range set {
		if !excludedFromManifest(p) {
			paths = append(paths, p)
		}
	}
	slices.SortFunc(paths, canonjson.Compare)
	return t, paths, nil
}

// excludedFromManifest: nothing under .git or .loki is ever an entry, even
// when the index tracks it.
func excludedFromManifest(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == ".git" || first == ".loki"
}

// describe computes the entries of paths with a bounded worker pool; the
// result keeps the order of paths.
func (o *Options) describe(ctx context.Context, t *tree, paths []string) ([]any, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	entries := make([]any, len(paths))
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for w := 0; w < min(o.workers(), max(1, len(paths))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, bufSize)
			for i := range jobs {
				e, err := t.entry(ctx, paths[i], buf)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				entries[i] = e
			}
		}()
	}
feed:
	for i := range paths {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return entries, nil
}

// budget is what is left of MaxBytes for one digest and its submodules;
// nil means no bound.
type budget struct {
	max  int64
	left atomic.Int64
}

func (o *Options) budget() *budget {
	m := o.MaxBytes
	if m == 0 {
		m = DefaultMaxBytes
	}
	if m < 0 {
		return nil
	}
	b := &budget{max: m}
	b.left.Store(m)
	return b
}

// take spends n bytes, or reports ErrTooLarge once the bound is crossed.
func (b *budget) take(n int64) error {
	if b == nil || n <= 0 || b.left.Add(-n) >= 0 {
		return nil
	}
	return fmt.Errorf("%w: more than %d bytes of file content (the bound)", ErrTooLarge, b.max)
}

// SumHex is the digest of a manifest returned by Manifest.
func SumHex(manifest []byte) string {
	sum := sha256.Sum256(manifest)
	return hex.EncodeToString(sum[:])
}
