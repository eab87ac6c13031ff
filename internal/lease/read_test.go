package lease

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadOnlyExactRegularFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	cases := []struct {
		name  string
		setup func() error
		ok    bool
	}{
		{"missing", func() error { return nil }, false},
		{"exact", func() error { return os.WriteFile(path, []byte("12345678"), 0o600) }, true},
		{"short", func() error { return os.WriteFile(path, []byte("1234567"), 0o600) }, false},
		{"long", func() error { return os.WriteFile(path, []byte("123456789"), 0o600) }, false},
		{"empty", func() error { return os.WriteFile(path, nil, 0o600) }, false},
		{"directory", func() error { return os.Mkdir(path, 0o700) }, false},
		{"fifo", func() error { return syscall.Mkfifo(path, 0o600) }, false},
		{"symlink", func() error {
			target := filepath.Join(dir, "target")
			if err := os.WriteFile(target, []byte("12345678"), 0o600); err != nil {
				return err
			}
			return os.Symlink(target, path)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(path)
			if err := tc.setup(); err != nil {
				t.Fatal(err)
			}
			done := make(chan bool, 1)
			go func() { _, ok := Read(path); done <- ok }()
			select {
			case ok := <-done:
				if ok != tc.ok {
					t.Fatalf("Read ok=%v, want %v", ok, tc.ok)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked")
			}
		})
	}
}

// The writer's values are always valid leases and always new.
func TestWriterRenewsWithNewValues(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	watch := NewWatcher(w.Path(), time.Hour, time.Now())
	for i := 0; i < 5; i++ {
		if err := w.Renew(); err != nil {
			t.Fatal(err)
		}
		if !watch.Observe(time.Now()) {
			t.Fatalf("renewal %d not observed", i)
		}
	}
	if watch.Observe(time.Now()) {
		t.Fatal("an unchanged lease counted as a renewal")
	}
	st, err := os.Stat(w.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("lease file mode %v %v", st.Mode(), err)
	}
}

func TestWatcherExpiry(t *testing.T) {
	t0 := time.Unix(100, 0)
	w := NewWatcher(filepath.Join(t.TempDir(), FileName), 5*time.Second, t0)
	cases := []struct {
		at      time.Duration
		expired bool
	}{
		{0, false}, {4999 * time.Millisecond, false}, {5 * time.Second, true}, {time.Hour, true},
	}
	for _, tc := range cases {
		if got := w.Check(t0.Add(tc.at)) == ErrExpired; got != tc.expired {
			t.Errorf("at +%v expired=%v", tc.at, got)
		}
	}
}

// FuzzRead: whatever bytes the lease file holds, Read accepts exactly the
// 8-byte files and returns their content.
func FuzzRead(f *testing.F) {
	f.Add([]byte("12345678"))
	f.Add([]byte(""))
	f.Add([]byte("123456789"))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		v, ok := Read(path)
		if ok != (len(content) == Size) {
			t.Fatalf("%d bytes: ok=%v", len(content), ok)
		}
		if ok && !bytes.Equal(v[:], content) {
			t.Fatalf("value %x, want %x", v, content)
		}
	})
}

// FuzzWatcher: a sequence of file contents renews the watcher exactly when
// an 8-byte value differs from the last accepted one.
func FuzzWatcher(f *testing.F) {
	f.Add([]byte("AAAAAAAA|AAAAAAAA|BBBBBBBB|short|BBBBBBBB"))
	f.Add([]byte("|CCCCCCCC"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, script []byte) {
		path := filepath.Join(dir, FileName)
		os.Remove(path)
		t0 := time.Unix(0, 0)
		w := NewWatcher(path, time.Hour, t0)
		var last []byte
		for i, content := range bytes.Split(script, []byte("|")) {
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			want := len(content) == Size && !bytes.Equal(content, last)
			if got := w.Observe(t0.Add(time.Duration(i) * time.Second)); got != want {
				t.Fatalf("step %d %q: renewed=%v want %v", i, content, got, want)
			}
			if want {
				last = append(last[:0], content...)
			}
		}
	})
}
