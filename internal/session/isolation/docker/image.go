package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/loki-sh/loki/internal/session/peerenv"
)

// Image is what a session takes from the image's own config: the peer
// runs with the image's ENV and WORKDIR (as `docker run` would run the
// image's command), unless --env or --cwd say otherwise.
type Image struct {
	Env        []string // NAME=VALUE, in the image's order
	WorkingDir string
	User       string
	// Home is the image user's home from its /etc/passwd ("" = unknown),
	// the peer's HOME when the image's ENV sets none.
	Home string
}

// Inspect reads image's config through the docker CLI. An image that is
// not there is pulled once (docker run would do the same, and the peer's
// defaults must come from the image that runs); a daemon that does not
// answer, or an image that cannot be had, is reported with its fix.
func Inspect(docker, image string) (Image, error) {
	if image == "" {
		return Image{}, fmt.Errorf("%w: --image is required", ErrOptions)
	}
	if docker == "" {
		docker = "docker"
	}
	cliPath, err := exec.LookPath(docker)
	if err != nil {
		return Image{}, fmt.Errorf("%w: %s: %s", ErrNotFound, docker, FixHint)
	}
	out, err := inspectFast(image)
	if err != nil {
		out, err = cli(cliPath, "image", "inspect", "--format", "{{json .Config}}", image)
	}
	if err != nil {
		if _, verr := cli(cliPath, "version", "--format", "{{.Server.Version}}"); verr != nil {
			return Image{}, fmt.Errorf("%w (%v): %s", ErrNoDaemon, verr, DaemonFixHint)
		}
		pull := exec.Command(cliPath, "pull", image)
		pull.Env, pull.Stdout, pull.Stderr = dockerEnv(), os.Stderr, os.Stderr
		if perr := pull.Run(); perr != nil {
			return Image{}, fmt.Errorf("%w: %s is not available locally and could not be pulled: %s", ErrNoImage, image, ImageFixHint)
		}
		if out, err = cli(cliPath, "image", "inspect", "--format", "{{json .Config}}", image); err != nil {
			return Image{}, fmt.Errorf("%w: %s: %v", ErrNoImage, image, err)
		}
	}
	var cfg struct {
		Env        []string
		WorkingDir string
		User       string
	}
	if s := strings.TrimSpace(string(out)); s != "" && s != "null" {
		if err := json.Unmarshal([]byte(s), &cfg); err != nil {
			return Image{}, fmt.Errorf("%w: %s: unreadable config: %v", ErrNoImage, image, err)
		}
	}
	return Image{Env: cfg.Env, WorkingDir: cfg.WorkingDir, User: cfg.User}, nil
}

// hostOnly are default variables whose host values mean nothing inside
// an image (its own filesystem and users): they come from the image, or
// not at all, unless --env names them.
var hostOnly = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true}

// PeerEnv is the peer's environment in this image: the image's ENV, then
// the default variables that describe the client rather than the host
// (TERM, LANG, LC_*, TZ) where the image sets none (none at all with
// NoDefaults), docker's default PATH and a HOME when the image has none,
// and last
// what --env names, which wins over everything.
func (img Image) PeerEnv(p peerenv.Policy, host []string) map[string]string {
	out := map[string]string{}
	for _, kv := range img.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && !strings.ContainsRune(kv, 0) {
			out[k] = v
		}
	}
	if !p.NoDefaults {
		for k, v := range (peerenv.Policy{TTY: p.TTY}).Build(host) {
			if _, set := out[k]; !set && !hostOnly[k] {
				out[k] = v
			}
		}
	}
	if !p.NoDefaults {
		if _, ok := out["PATH"]; !ok {
			out["PATH"] = peerenv.FallbackPath
		}
		if _, ok := out["HOME"]; !ok {
			out["HOME"] = img.home()
		}
	}
	for k, v := range (peerenv.Policy{NoDefaults: true, Rules: p.Rules}).Build(host) {
		out[k] = v
	}
	return out
}

// home is HOME where the image sets none: root's home for root (the
// image's default user), "/" for others, as docker does without an
// /etc/passwd entry.
func (img Image) home() string {
	if img.Home != "" {
		return img.Home
	}
	switch u, _, _ := strings.Cut(img.User, ":"); u {
	case "", "0", "root":
		return "/root"
	}
	return "/"
}

// Cwd is the peer's working directory when --cwd is not given: the
// image's WORKDIR, else "/".
func (img Image) Cwd() string {
	if img.WorkingDir != "" && path.IsAbs(img.WorkingDir) {
		return path.Clean(img.WorkingDir)
	}
	return "/"
}

// inspectFast asks the daemon for the image's config over its unix
// socket, in-process: on every session this saves starting the CLI (21
// against ~1 ms on a loaded 2-vCPU VM, 7 % of a session's start). Only for
// the plain setup, DOCKER_HOST unset or unix:// and no context chosen;
// anything else, or any failure, leaves it to the CLI.
func inspectFast(image string) ([]byte, error) {
	sock := localSocket()
	if sock == "" {
		return nil, errors.New("not a plain local daemon")
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}, Timeout: cliTimeout}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://docker/images/" + url.PathEscape(image) + "/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("image inspect: %s", resp.Status)
	}
	var body struct{ Config json.RawMessage }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&body); err != nil {
		return nil, err
	}
	return body.Config, nil
}

// localSocket is the daemon's unix socket when the CLI would use it
// without a context: DOCKER_HOST unset or unix://, DOCKER_CONTEXT unset
// or "default", and no currentContext in the CLI's config.
func localSocket() string {
	if c := os.Getenv("DOCKER_CONTEXT"); c != "" && c != "default" {
		return ""
	}
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		dir := os.Getenv("DOCKER_CONFIG")
		if dir == "" {
			home, _ := os.UserHomeDir()
			dir = filepath.Join(home, ".docker")
		}
		if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
			var cfg struct{ CurrentContext string }
			if json.Unmarshal(b, &cfg) != nil || cfg.CurrentContext != "" && cfg.CurrentContext != "default" {
				return ""
			}
		}
		return "/var/run/docker.sock"
	}
	if sock, ok := strings.CutPrefix(host, "unix://"); ok && sock != "" {
		return sock
	}
	return ""
}
