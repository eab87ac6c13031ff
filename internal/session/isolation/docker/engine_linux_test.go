package docker

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// The in-process inspect reads the same config as the CLI (real engine).
func TestInspectFastMatchesCLI(t *testing.T) {
	docker := testutil.RequireDocker(t)
	if localSocket() == "" {
		t.Skip("the CLI uses a context or a remote DOCKER_HOST here: inspectFast is not used")
	}
	img := testutil.DockerImage(t, "loki-test:busybox-env", "ENV FOO=image PATH=/bin:/sbin HOME=/home/agent", "WORKDIR /tmp")
	fast, err := inspectFast(img)
	if err != nil {
		t.Fatalf("inspectFast: %v", err)
	}
	slow, err := cli(docker, "image", "inspect", "--format", "{{json .Config}}", img)
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		Env              []string
		WorkingDir, User string
	}
	var a, b config
	if err := json.Unmarshal(fast, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(slow, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || a.WorkingDir != "/tmp" {
		t.Fatalf("fast %v\nCLI  %v", a, b)
	}
	if _, err := inspectFast("loki-test:no-such-image"); err == nil {
		t.Fatal("inspectFast found an image that does not exist")
	}
}
