// Command digestbench times the manifest-v3 tree digest on a generated
// tree (default 20,000 files, 1 GiB, part of it tracked by git): loki's
// parallel digest, the same with one worker, a plain sequential Go
// implementation written here from the spec, and a sequential Python
// equivalent (reference.py, how the upstream tool works). All four must
// agree on the digest; the table gives milliseconds and ratios.
package main

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/proof/treedigest"
)

//go:embed reference.py
var referencePy []byte

func main() {
	files := flag.Int("files", 20000, "number of files in the tree")
	total := flag.Int64("bytes", 1<<30, "total bytes of file content")
	tracked := flag.Float64("tracked", 0.5, "fraction of files added to the git index")
	runs := flag.Int("runs", 3, "timed runs per implementation (median reported)")
	python := flag.Bool("python", true, "also time python3 reference.py")
	flag.Parse()
	if err := bench(*files, *total, *tracked, *runs, *python); err != nil {
		fmt.Fprintln(os.Stderr, "digestbench:", err)
		os.Exit(1)
	}
}

type impl struct {
	name string
	run  func(root string) (string, error)
}

func bench(files int, total int64, tracked float64, runs int, python bool) error {
	dir, err := os.MkdirTemp("", "loki-digestbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "tree")
	start := time.Now()
	if err := buildTree(root, files, total, tracked); err != nil {
		return err
	}
	fmt.Printf("tree: %d files, %d MiB, %.0f%% tracked, built in %s (GOMAXPROCS %d)\n",
		files, total>>20, tracked*100, time.Since(start).Round(time.Millisecond), runtime.GOMAXPROCS(0))
	ctx := context.Background()
	impls := []impl{
		{"loki parallel (default workers)", func(r string) (string, error) { return treedigest.Digest(ctx, r) }},
		{"loki, 1 worker", func(r string) (string, error) { return (&treedigest.Options{Workers: 1}).Digest(ctx, r) }},
		{"sequential Go (this benchmark)", sequentialDigest},
	}
	if python {
		script := filepath.Join(dir, "reference.py")
		if err := os.WriteFile(script, referencePy, 0o600); err != nil {
			return err
		}
		impls = append(impls, impl{"python3 sequential (reference.py)", func(r string) (string, error) {
			out, err := exec.Command("python3", script, r).Output()
			return strings.TrimSpace(string(out)), err
		}})
	}
	// One untimed pass warms the page cache for everyone alike.
	want, err := impls[0].run(root)
	if err != nil {
		return err
	}
	medians := make([]time.Duration, len(impls))
	for i, im := range impls {
		var times []time.Duration
		for r := 0; r < runs; r++ {
			t0 := time.Now()
			got, err := im.run(root)
			if err != nil {
				return fmt.Errorf("%s: %w", im.name, err)
			}
			times = append(times, time.Since(t0))
			if got != want {
				return fmt.Errorf("%s disagrees: %s, loki says %s", im.name, got, want)
			}
		}
		slices.Sort(times)
		medians[i] = times[len(times)/2]
	}
	fmt.Printf("digest %s (all implementations agree)\n\n", want)
	fmt.Printf("%-36s %10s %14s\n", "implementation", "median ms", "vs parallel")
	for i, im := range impls {
		fmt.Printf("%-36s %10d %13.2fx\n", im.name, medians[i].Milliseconds(), float64(medians[i])/float64(medians[0]))
	}
	fmt.Println("\n(warm page cache; 2 vCPUs shared with other work: figures are indicative)")
	return nil
}

// buildTree writes files of varied sizes (most small, a few large, summing
// to total) in directories of 100, plus excluded directories the walk must
// skip, and adds a fraction of the files to the index.
func buildTree(root string, files int, total int64, tracked float64) error {
	rng := rand.New(rand.NewPCG(1, 2))
	weights := make([]float64, files)
	var sum float64
	for i := range weights {
		weights[i] = rng.ExpFloat64() * rng.ExpFloat64() // heavy tail
		sum += weights[i]
	}
	chunk := make([]byte, 1<<20)
	var paths []string
	for i := range files {
		rel := fmt.Sprintf("d%03d/f%05d.bin", i/100, i)
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		size := int64(weights[i] / sum * float64(total))
		if err := writeRandom(p, size, rng, chunk); err != nil {
			return err
		}
		if float64(i%100) < tracked*100 {
			paths = append(paths, rel)
		}
	}
	for _, rel := range []string{"node_modules/dep/index.js", "target/out.o", "d000/__pycache__/m.pyc"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("excluded\n"), 0o644); err != nil {
			return err
		}
	}
	if err := gitIn(root, nil, "init", "-q"); err != nil {
		return err
	}
	return gitIn(root, strings.NewReader(strings.Join(paths, "\n")+"\n"),
		"-c", "core.compression=0", "-c", "core.looseCompression=0", "add", "--pathspec-from-file=-")
}

func writeRandom(p string, size int64, rng *rand.Rand, chunk []byte) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	for size > 0 {
		n := min(size, int64(len(chunk)))
		for i := 0; i+8 <= int(n); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8; j++ {
				chunk[i+j] = byte(v >> (8 * j))
			}
		}
		if _, err := f.Write(chunk[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	return f.Close()
}

func gitIn(dir string, stdin io.Reader, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %v: %s", args, err, out)
	}
	return nil
}

// sequentialDigest is the spec written as directly as possible: index ∪
// walk, then one entry at a time. It handles what the generated tree holds
// (files, the exclusions); no submodules, no symlinks.
func sequentialDigest(root string) (string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached").Output()
	if err != nil {
		return "", err
	}
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	top := map[string]bool{".git": true, ".loki": true, ".next": true, ".nuxt": true, "target": true}
	anyDepth := map[string]bool{".git": true, ".mypy_cache": true, ".pytest_cache": true, ".venv": true, "__pycache__": true, "node_modules": true, "venv": true}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && ((!strings.Contains(rel, "/") && top[d.Name()]) || anyDepth[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		set[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		return "", err
	}
	var paths []string
	for p := range set {
		if first, _, _ := strings.Cut(p, "/"); first != ".git" && first != ".loki" {
			paths = append(paths, p)
		}
	}
	slices.SortFunc(paths, canonjson.Compare)
	entries := make([]any, 0, len(paths))
	for _, p := range paths {
		e, err := sequentialEntry(root, p)
		if err != nil {
			return "", err
		}
		entries = append(entries, e)
	}
	m, err := canonjson.Marshal(map[string]any{
		"version": 3,
		"filesystem_walk_excluded_top_level_directories": []string{".git", ".loki", ".next", ".nuxt", "target"},
		"excluded_walk_directories":                      []string{".git", ".mypy_cache", ".pytest_cache", ".venv", "__pycache__", "node_modules", "venv"},
		"entries":                                        entries,
	})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(m)
	return hex.EncodeToString(sum[:]), nil
}

func sequentialEntry(root, rel string) (map[string]any, error) {
	fi, err := os.Lstat(filepath.Join(root, rel))
	if os.IsNotExist(err) {
		return map[string]any{"path": rel, "kind": "missing"}, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: the generated tree holds only regular files", rel)
	}
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": rel, "kind": "file", "executable": fi.Mode().Perm()&0o111 != 0,
		"size": n, "sha256": hex.EncodeToString(h.Sum(nil))}, nil
}
