package attach

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pollEvery is how often the runtime is asked while waiting for a state.
const pollEvery = 50 * time.Millisecond

// Runtime is a CRI runtime service (containerd's, CRI-O's).
type Runtime struct {
	conn *grpc.ClientConn
	runtimeapi.RuntimeServiceClient
}

// DialRuntime connects to a CRI endpoint: unix:///path or a socket path.
func DialRuntime(endpoint string) (*Runtime, error) {
	target := endpoint
	if !strings.Contains(target, "://") {
		target = "unix://" + target
	}
	if !strings.HasPrefix(target, "unix://") {
		return nil, fmt.Errorf("%w: --runtime-endpoint %s: want unix:///path/to/cri.sock", ErrAttach, endpoint)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAttach, err)
	}
	return &Runtime{conn: conn, RuntimeServiceClient: runtimeapi.NewRuntimeServiceClient(conn)}, nil
}

// Close closes the connection.
func (r *Runtime) Close() error { return r.conn.Close() }

// Sandbox returns the ready sandbox of the Pod name in namespace, waiting
// until ctx ends for it to appear.
func (r *Runtime) Sandbox(ctx context.Context, name, namespace string) (*runtimeapi.PodSandbox, error) {
	for {
		resp, err := r.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
			State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrAttach, err)
		}
		for _, s := range resp.Items {
			if m := s.Metadata; m != nil && m.Name == name && m.Namespace == namespace {
				return s, nil
			}
		}
		if err := pause(ctx); err != nil {
			return nil, fmt.Errorf("%w: no ready sandbox of Pod %s/%s: %v", ErrAttach, namespace, name, err)
		}
	}
}

// Container waits until ctx ends for the container name of the sandbox to
// have started (running or already exited) and returns it, the newest
// attempt when the runtime keeps several.
func (r *Runtime) Container(ctx context.Context, sandbox, name string) (*runtimeapi.Container, error) {
	for {
		resp, err := r.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sandbox}})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrAttach, err)
		}
		var found *runtimeapi.Container
		for _, c := range resp.Containers {
			if c.Metadata != nil && c.Metadata.Name == name && (found == nil || c.Metadata.Attempt > found.Metadata.Attempt) {
				found = c
			}
		}
		if found != nil && (found.State == runtimeapi.ContainerState_CONTAINER_RUNNING || found.State == runtimeapi.ContainerState_CONTAINER_EXITED) {
			return found, nil
		}
		if err := pause(ctx); err != nil {
			return nil, fmt.Errorf("%w: container %s did not start: %v", ErrAttach, name, err)
		}
	}
}

// AttachURL asks the runtime for the streaming URL of an attach.
func (r *Runtime) AttachURL(ctx context.Context, id string, stdin, stdout, stderr bool) (string, error) {
	resp, err := r.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrAttach, err)
	}
	return resp.Url, nil
}

// Exited waits until ctx ends for the container to have exited and
// returns its code.
func (r *Runtime) Exited(ctx context.Context, id string) (int32, error) {
	for {
		resp, err := r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err == nil && resp.Status != nil && resp.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return resp.Status.ExitCode, nil
		}
		if err := pause(ctx); err != nil {
			return 0, err
		}
	}
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(pollEvery):
		return nil
	}
}
