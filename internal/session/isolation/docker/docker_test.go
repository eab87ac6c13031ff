package docker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/session/seccomp/ocispec"
)

func TestArgs(t *testing.T) {
	base := Options{
		Image: "debian:12", Init: "/opt/loki/bin/loki-init", ControlDir: "/run/loki/session-1/control",
		InitArgs: []string{"-lease-duration", "5s", "-poll-interval", "100ms", "-grace", "10s"},
		Name:     "loki-abc", PidsLimit: 4096, SeccompProfile: "/run/loki/session-1/scratch/seccomp.json",
	}
	common := []string{"docker", "run", "-i", "--rm",
		"--name", "loki-abc",
		"--entrypoint", "/.loki/init",
		"--mount", "type=bind,source=/opt/loki/bin/loki-init,target=/.loki/init,readonly",
		"--mount", "type=bind,source=/run/loki/session-1/control,target=/.loki/control,readonly",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--security-opt", "seccomp=/run/loki/session-1/scratch/seccomp.json",
		"--log-driver", "none",
		"--pids-limit", "4096",
	}
	tail := []string{"debian:12", "-lease-duration", "5s", "-poll-interval", "100ms", "-grace", "10s", "-seccomp", "/.loki/control"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		edit func(*Options)
		want []string
	}{
		{"defaults: read-only root with tmpfs /tmp", func(*Options) {},
			cat(common, []string{"--read-only", "--tmpfs", "/tmp"}, tail)},
		{"writable root, user and binds (mounts: a missing source is an error)", func(o *Options) {
			o.WritableRootfs, o.User, o.Binds = true, "1000:1000", []string{"/src:/work", "/data:/data:ro"}
		}, cat(common, []string{"--user", "1000:1000", "--mount", "type=bind,source=/src,target=/work",
			"--mount", "type=bind,source=/data,target=/data,readonly"}, tail)},
		{"cid file", func(o *Options) { o.CIDFile = "/run/loki/session-1/scratch/docker.cid" },
			cat(common, []string{"--read-only", "--tmpfs", "/tmp", "--cidfile", "/run/loki/session-1/scratch/docker.cid"}, tail)},
		{"memory and CPU limits (swap at the memory limit: none)", func(o *Options) { o.MemoryMax, o.CPUs = 32<<20, "0.5" },
			cat(common, []string{"--memory", "33554432", "--memory-swap", "33554432", "--cpus", "0.5", "--read-only", "--tmpfs", "/tmp"}, tail)},
		{"custom CLI path, no pids limit", func(o *Options) { o.Docker, o.PidsLimit = "/usr/local/bin/docker", 0 },
			cat([]string{"/usr/local/bin/docker"}, common[1:len(common)-2], []string{"--read-only", "--tmpfs", "/tmp"}, tail)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			got, err := Args(o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Args:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestArgsRejects(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"no image", Options{Init: "/i", ControlDir: "/c"}},
		{"comma in a mount source", Options{Image: "x", Init: "/a,b", ControlDir: "/c"}},
		{"quote in the control dir", Options{Image: "x", Init: "/i", ControlDir: "/c\""}},
		{"relative bind source", Options{Image: "x", Init: "/i", ControlDir: "/c", Binds: []string{"src:/work"}}},
		{"bind mode not ro or rw", Options{Image: "x", Init: "/i", ControlDir: "/c", Binds: []string{"/src:/work:z"}}},
		{"bind inside the control root", Options{Image: "x", Init: "/i", ControlDir: testRoot + "/s1/control",
			ControlRoot: testRoot, Binds: []string{testRoot + "/s2:/work"}}},
		{"bind of the control root itself", Options{Image: "x", Init: "/i", ControlDir: testRoot + "/s1/control",
			ControlRoot: testRoot, Binds: []string{testRoot + ":/work:ro"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Args(tc.o); !errors.Is(err, ErrOptions) {
				t.Fatalf("Args(%+v) = %v, want ErrOptions", tc.o, err)
			}
		})
	}
}

// testRoot is a control root that does not exist here (no symlink to
// resolve), like /run/loki on a host.
const testRoot = "/nonexistent-loki/run"

// TestSeccompProfile: the profile file is the oci config's policy in
// Docker's format, private to the supervisor; without one Args refuses.
func TestSeccompProfile(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteSeccompProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile %s: %v %v", p, st, err)
	}
	b, _ := os.ReadFile(p)
	var prof struct {
		DefaultAction string `json:"defaultAction"`
		Syscalls      []struct {
			Names    []string `json:"names"`
			Action   string   `json:"action"`
			ErrnoRet *uint    `json:"errnoRet"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal(b, &prof); err != nil {
		t.Fatal(err)
	}
	if prof.DefaultAction != "SCMP_ACT_ALLOW" || len(prof.Syscalls) != len(ocispec.Seccomp().Syscalls) {
		t.Fatalf("profile %s", b)
	}
	for _, s := range prof.Syscalls {
		if s.Action != "SCMP_ACT_ERRNO" || s.ErrnoRet == nil || *s.ErrnoRet == 0 {
			t.Errorf("rule %+v: want an errno", s)
		}
	}
	if _, err := Args(Options{Image: "x", Init: "/i", ControlDir: "/c"}); !errors.Is(err, ErrOptions) {
		t.Errorf("no profile: %v, want ErrOptions", err)
	}
}

// A bind that would show the host's control root (every session's lease)
// gets an empty read-only tmpfs over that view, as in the oci backend.
func TestControlRootMasked(t *testing.T) {
	o := Options{Image: "x", Init: "/i", ControlDir: testRoot + "/s1/control", ControlRoot: testRoot,
		SeccompProfile: "/p", Binds: []string{"/nonexistent-loki:/host:ro", "/usr:/usr:ro"}}
	got, err := Args(o)
	if err != nil {
		t.Fatal(err)
	}
	var masks []string
	for i, a := range got {
		if a == "--mount" && i+1 < len(got) && strings.HasPrefix(got[i+1], "type=tmpfs,") {
			masks = append(masks, got[i+1])
		}
	}
	want := []string{"type=tmpfs,destination=/host/run,readonly,tmpfs-mode=0700,tmpfs-size=65536"}
	if !reflect.DeepEqual(masks, want) {
		t.Fatalf("masks %q, want %q (args %q)", masks, want, got)
	}
}

// TestArgsHide: a hidden path is an empty read-only tmpfs, or /dev/null
// where the host has a regular file at the same path.
func TestArgsHide(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Image: "img", Init: "/init", ControlDir: "/run/loki/session-1/control", Name: "n",
		SeccompProfile: "/p", Hide: []string{"/root/.ssh-does-not-exist", file}}
	got, err := Args(o)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(got, " ")
	for _, want := range []string{
		"--mount type=tmpfs,destination=/root/.ssh-does-not-exist,readonly,tmpfs-mode=0555,tmpfs-size=4096",
		"--mount type=bind,source=/dev/null,target=" + file + ",readonly",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("Args %q: missing %q", got, want)
		}
	}
	o.Hide = []string{"/a,b"}
	if _, err := Args(o); err == nil {
		t.Errorf("a hide path with a comma was accepted")
	}
}

// TestArgsRefusesRelinkedBindSource: an earlier peer replaced a directory
// of the bind's source with a symlink out of it; dockerd would follow it,
// so Args refuses (before: the link was passed on and followed). The real
// path, and a source docker will report missing, pass.
func TestArgsRefusesRelinkedBindSource(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "etc")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(outside, 0o755)
	if err := os.Symlink(outside, filepath.Join(ws, "data")); err != nil {
		t.Fatal(err)
	}
	o := Options{Image: "img", Init: "/init", ControlDir: "/c", Name: "n", SeccompProfile: "/s"}
	for _, tc := range []struct {
		bind string
		ok   bool
	}{
		{filepath.Join(ws, "data") + ":/data", false},
		{filepath.Join(ws, "data", "sub") + ":/data", true}, // missing: docker's own refusal
		{ws + ":/ws", true},
		{outside + ":/data", true},
	} {
		o.Binds = []string{tc.bind}
		_, err := Args(o)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, ErrOptions)) {
			t.Errorf("--bind %s: %v", tc.bind, err)
		}
	}
}
