//go:build linux

package cri

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/session/isolation/kubernetes/attach"
	"github.com/loki-sh/loki/internal/testutil"
)

// The images the tests import, built here from the host's static busybox
// and the built binaries (no registry is reachable).
const (
	agentImage = "docker.io/loki-test/cri-agent:1"
	lokiImage  = "docker.io/loki-test/cri-loki:1"
	pauseImage = "docker.io/loki-test/cri-pause:1"
)

// daemon is the tests' private containerd with its CRI plugin.
type daemon struct {
	dir, sock string
	cmd       *exec.Cmd
	rt        *attach.Runtime
}

var (
	shared     *daemon
	sharedErr  string
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	os.Exit(code)
}

// cri returns the private containerd, started (and its images imported)
// on first use; it is stopped by its PID when the tests end.
func cri(t *testing.T) *daemon {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireCommand(t, "containerd")
	testutil.RequireCommand(t, "runc")
	testutil.RequireCommand(t, "ctr")
	bb := testutil.RequireCommand(t, "busybox")
	sharedOnce.Do(func() {
		d, err := startDaemon(bb, testutil.Binary(t, "loki-init"), testutil.Binary(t, "loki-supervise"))
		if err != nil {
			sharedErr = err.Error()
			return
		}
		shared = d
	})
	if shared == nil {
		t.Fatalf("private containerd: %s", sharedErr)
	}
	return shared
}

func startDaemon(busybox, init, supervise string) (*daemon, error) {
	dir, err := os.MkdirTemp("", "loki-cri-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &daemon{dir: dir, sock: filepath.Join(dir, "containerd.sock")}
	// restrict_oom_score_adj: root here may lack CAP_SYS_RESOURCE, and
	// runc then fails every sandbox writing oom_score_adj. Host network
	// only: no CNI config, so none is loaded.
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = %[6]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[8]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[7]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), d.sock, d.sock+".ttrpc", pauseImage, strconv.Itoa(port), filepath.Join(dir, "cni"), filepath.Join(dir, "runc"))
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	d.cmd = exec.Command("containerd", "--config", cfg)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	fail := func(err error) (*daemon, error) {
		d.stop()
		log, _ := os.ReadFile(logf.Name())
		if len(log) > 2000 {
			log = log[len(log)-2000:]
		}
		return nil, fmt.Errorf("%v; log tail:\n%s", err, log)
	}
	if !testutil.WaitUntil(30*time.Second, func() bool {
		return exec.Command("ctr", "--address", d.sock, "version").Run() == nil
	}) {
		return fail(fmt.Errorf("containerd did not answer on %s in 30 s", d.sock))
	}
	if d.rt, err = attach.DialRuntime(d.sock); err != nil {
		return fail(err)
	}
	bbData, err := os.ReadFile(busybox)
	if err != nil {
		return fail(err)
	}
	busyboxFiles := []file{{name: "bin/", mode: 0o755}, {name: "tmp/", mode: 0o1777}, {name: "etc/", mode: 0o755},
		{name: "proc/", mode: 0o555}, {name: "sys/", mode: 0o555}, {name: "dev/", mode: 0o755},
		{name: "bin/busybox", mode: 0o755, data: bbData},
		{name: "secret/", mode: 0o755}, {name: "secret/key", mode: 0o644, data: []byte("hidden\n")}}
	for _, a := range []string{"sh", "cat", "tee", "sleep", "head", "id", "touch", "ls", "grep", "echo", "kill", "trap", "true", "dd", "wc", "mkdir"} {
		busyboxFiles = append(busyboxFiles, file{name: "bin/" + a, link: "busybox"})
	}
	var lokiFiles []file
	lokiFiles = append(lokiFiles, file{name: "loki/", mode: 0o755})
	for _, b := range []string{init, supervise} {
		data, err := os.ReadFile(b)
		if err != nil {
			return fail(err)
		}
		lokiFiles = append(lokiFiles, file{name: "loki/" + filepath.Base(b), mode: 0o755, data: data})
	}
	for _, img := range []struct {
		ref   string
		files []file
		cmd   []string
	}{
		{agentImage, busyboxFiles, []string{"/bin/sh"}},
		{pauseImage, busyboxFiles, []string{"/bin/sleep", "2147483647"}},
		{lokiImage, lokiFiles, nil},
	} {
		archive, err := ociArchive(img.ref, img.files, img.cmd)
		if err != nil {
			return fail(err)
		}
		cmd := exec.Command("ctr", "--address", d.sock, "--namespace", "k8s.io", "images", "import", "--snapshotter", "overlayfs", "-")
		cmd.Stdin = bytes.NewReader(archive)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("ctr images import %s: %v: %s", img.ref, err, out))
		}
	}
	return d, nil
}

// stop ends containerd by its PID (SIGTERM, then SIGKILL after 10 s) and
// removes its directories.
func (d *daemon) stop() {
	if d.rt != nil {
		d.rt.Close()
	}
	if d.cmd.Process != nil {
		d.cmd.Process.Signal(syscall.SIGTERM)
		testutil.Wait(d.cmd).Within(10 * time.Second)
	}
	// The snapshots are mounted under root only while containers exist:
	// none is left (every test removes its sandbox).
	os.RemoveAll(d.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// file is an entry of an image's only layer: a dir (name ends in /), a
// symlink (link) or a regular file.
type file struct {
	name string
	mode int64
	data []byte
	link string
}

// ociArchive is an OCI image layout as a tar, named ref for containerd.
func ociArchive(ref string, files []file, cmd []string) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
		case f.name[len(f.name)-1] == '/':
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	blobs := map[string][]byte{}
	desc := func(mediaType string, b []byte) map[string]any {
		d := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
		blobs[d] = b
		return map[string]any{"mediaType": mediaType, "digest": d, "size": len(b)}
	}
	layerDesc := desc("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	config, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Cmd": cmd, "Env": []string{"PATH=/bin"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []any{layerDesc["digest"]}},
	})
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": desc("application/vnd.oci.image.config.v1+json", config),
		"layers": []any{layerDesc},
	})
	mdesc := desc("application/vnd.oci.image.manifest.v1+json", manifest)
	mdesc["annotations"] = map[string]string{"io.containerd.image.name": ref}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{mdesc}})
	var out bytes.Buffer
	ow := tar.NewWriter(&out)
	put := func(name string, b []byte) error {
		if err := ow.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := ow.Write(b)
		return err
	}
	if err := put("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	if err := put("index.json", index); err != nil {
		return nil, err
	}
	for d, b := range blobs {
		if err := put("blobs/sha256/"+d[len("sha256:"):], b); err != nil {
			return nil, err
		}
	}
	if err := ow.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// ctx is a bounded context for one CRI call sequence.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
