package docker

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
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
	out, err := cli(cliPath, "image", "inspect", "--format", "{{json .Config}}", image)
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
		for k, v := range (peerenv.Policy{}).Build(host) {
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
