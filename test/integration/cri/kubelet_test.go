//go:build linux

package cri

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes"
	"github.com/loki-sh/loki/internal/testutil"
)

// podSpec runs `loki-supervise pod-spec` with the test's images and
// returns the Pod it printed.
func podSpec(t *testing.T, name string, flags ...string) *corev1.Pod {
	t.Helper()
	args := append([]string{"pod-spec", "--name", name, "--namespace", "loki-test", "--image", agentImage, "--loki-image", lokiImage}, flags...)
	cmd := exec.Command(testutil.Binary(t, "loki-supervise"), args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pod-spec %v: %v (%s)", flags, err, stderrOf(err))
	}
	var pod corev1.Pod
	if err := json.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// pod is one Pod run by kubelet below.
type pod struct {
	spec      *corev1.Pod
	sandbox   string
	ids       map[string]string // container name -> id
	dir       string            // the Pod's volumes and logs
	sandboxNS *runtimeapi.NamespaceOption
}

// kubelet runs pod the way a kubelet does, through CRI calls only:
// RunPodSandbox (host network: there is no CNI here; the Pod itself asks
// for the Pod network), then the init containers in order (a plain one to
// its exit 0, a restartPolicy Always one started and left running), then
// the containers, each CreateContainer with the spec's mounts and merged
// security context. emptyDir volumes are directories of the Pod's own
// (0777, as the kubelet makes them), hostPath volumes the node's path. The
// Pod is stopped and removed when the test ends.
func kubelet(t *testing.T, d *daemon, spec *corev1.Pod) *pod {
	t.Helper()
	c := ctx(t)
	p := &pod{spec: spec, ids: map[string]string{}, dir: t.TempDir()}
	volumes := map[string]string{}
	for _, v := range spec.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
			dir := filepath.Join(p.dir, "volumes", v.Name)
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o777)
			volumes[v.Name] = dir
		case v.HostPath != nil:
			if st, err := os.Stat(v.HostPath.Path); err != nil || !st.IsDir() {
				t.Fatalf("hostPath %s: not a directory on the node", v.HostPath.Path)
			}
			volumes[v.Name] = v.HostPath.Path
		default:
			t.Fatalf("volume %s: a kind this kubelet does not make", v.Name)
		}
	}
	var uid [8]byte
	rand.Read(uid[:])
	psc := spec.Spec.SecurityContext
	p.sandboxNS = &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if spec.Spec.ShareProcessNamespace != nil && *spec.Spec.ShareProcessNamespace {
		p.sandboxNS.Pid = runtimeapi.NamespaceMode_POD
	}
	sbConfig := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: spec.Name, Namespace: spec.Namespace, Uid: fmt.Sprintf("%x", uid)},
		// Hostname stays empty: a host-network sandbox has the node's.
		LogDirectory: filepath.Join(p.dir, "logs"),
		Labels:       map[string]string{"io.kubernetes.pod.name": spec.Name, "io.kubernetes.pod.namespace": spec.Namespace},
		Annotations:  spec.Annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: p.sandboxNS,
			RunAsUser:        &runtimeapi.Int64Value{Value: *psc.RunAsUser},
			RunAsGroup:       &runtimeapi.Int64Value{Value: *psc.RunAsGroup},
			Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
		}},
	}
	if err := os.MkdirAll(sbConfig.LogDirectory, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sb, err := d.rt.RunPodSandbox(c, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	p.sandbox = sb.PodSandboxId
	t.Logf("RunPodSandbox %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range append(spec.Spec.InitContainers, spec.Spec.Containers...) {
				l := p.log(c.Name)
				if len(l) > 2000 {
					l = "..." + l[len(l)-2000:]
				}
				t.Logf("log of %s:\n%s", c.Name, l)
			}
		}
		p.remove(t, d)
	})
	run := func(ctr corev1.Container) {
		req, err := p.containerConfig(ctr, volumes)
		if err != nil {
			t.Fatal(err)
		}
		req.SandboxConfig = sbConfig
		created, err := d.rt.CreateContainer(c, req)
		if err != nil {
			t.Fatalf("CreateContainer %s: %v", ctr.Name, err)
		}
		p.ids[ctr.Name] = created.ContainerId
		if _, err := d.rt.StartContainer(c, &runtimeapi.StartContainerRequest{ContainerId: created.ContainerId}); err != nil {
			t.Fatalf("StartContainer %s: %v", ctr.Name, err)
		}
	}
	for _, ctr := range spec.Spec.InitContainers {
		run(ctr)
		if ctr.RestartPolicy != nil && *ctr.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			continue // a native sidecar: started, then the next one
		}
		if code, err := d.rt.Exited(c, p.ids[ctr.Name]); err != nil || code != 0 {
			t.Fatalf("init container %s: exit %d (%v); log:\n%s", ctr.Name, code, err, p.log(ctr.Name))
		}
	}
	for _, ctr := range spec.Spec.Containers {
		run(ctr)
	}
	return p
}

// containerConfig is the CRI config the kubelet derives from ctr: the pod
// securityContext under the container's, the kubelet's default masked
// and read-only paths, limits as cgroup values (cpu over the 100 ms
// period, swap equal to memory: none).
func (p *pod) containerConfig(ctr corev1.Container, volumes map[string]string) (*runtimeapi.CreateContainerRequest, error) {
	psc, sc := p.spec.Spec.SecurityContext, ctr.SecurityContext
	uid, gid := psc.RunAsUser, psc.RunAsGroup
	if sc.RunAsUser != nil {
		uid = sc.RunAsUser
	}
	if sc.RunAsGroup != nil {
		gid = sc.RunAsGroup
	}
	nonRoot := psc.RunAsNonRoot
	if sc.RunAsNonRoot != nil {
		nonRoot = sc.RunAsNonRoot
	}
	if nonRoot != nil && *nonRoot && (uid == nil || *uid == 0) {
		return nil, fmt.Errorf("container %s: runAsNonRoot and uid 0: the kubelet refuses it", ctr.Name)
	}
	var drop []string
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Drop {
			drop = append(drop, string(c))
		}
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		return nil, fmt.Errorf("container %s: no RuntimeDefault seccomp profile", ctr.Name)
	}
	var mounts []*runtimeapi.Mount
	for _, m := range ctr.VolumeMounts {
		host, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("container %s: volume %s not in the Pod", ctr.Name, m.Name)
		}
		mounts = append(mounts, &runtimeapi.Mount{ContainerPath: m.MountPath, HostPath: host, Readonly: m.ReadOnly})
	}
	res := &runtimeapi.LinuxContainerResources{CpuShares: 2}
	if q, ok := ctr.Resources.Limits[corev1.ResourceMemory]; ok {
		res.MemoryLimitInBytes = q.Value()
		res.MemorySwapLimitInBytes = q.Value()
	}
	if q, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok {
		res.CpuPeriod = confine.CPUPeriod
		res.CpuQuota = q.MilliValue() * confine.CPUPeriod / 1000
		res.CpuShares = q.MilliValue() * 1024 / 1000
	}
	return &runtimeapi.CreateContainerRequest{
		PodSandboxId: p.sandbox,
		Config: &runtimeapi.ContainerConfig{
			Metadata:   &runtimeapi.ContainerMetadata{Name: ctr.Name},
			Image:      &runtimeapi.ImageSpec{Image: ctr.Image},
			Command:    ctr.Command,
			Args:       ctr.Args,
			WorkingDir: ctr.WorkingDir,
			Labels:     map[string]string{"io.kubernetes.container.name": ctr.Name},
			Mounts:     mounts,
			LogPath:    ctr.Name + "/0.log",
			Stdin:      ctr.Stdin,
			StdinOnce:  ctr.StdinOnce,
			Tty:        ctr.TTY,
			Linux: &runtimeapi.LinuxContainerConfig{
				Resources: res,
				SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
					Capabilities:     &runtimeapi.Capability{DropCapabilities: drop},
					Privileged:       sc.Privileged != nil && *sc.Privileged,
					NamespaceOptions: p.sandboxNS,
					RunAsUser:        &runtimeapi.Int64Value{Value: *uid},
					RunAsGroup:       &runtimeapi.Int64Value{Value: *gid},
					ReadonlyRootfs:   sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
					NoNewPrivs:       sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
					MaskedPaths:      confine.MaskedPaths,
					ReadonlyPaths:    confine.ReadonlyPaths,
					Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
				},
			},
		},
	}, nil
}

// log is a container's CRI log file.
func (p *pod) log(name string) string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "logs", name, "0.log"))
	return string(b)
}

// logStreams parses the agent's CRI log ("TIME STREAM P|F CONTENT"
// lines) back into its stdout and stderr bytes.
func (p *pod) logStreams() (stdout, stderr []byte) {
	b, _ := os.ReadFile(filepath.Join(p.dir, "logs", kubernetes.AgentContainer, "0.log"))
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		f := bytes.SplitN(line, []byte(" "), 4)
		if len(f) != 4 {
			continue
		}
		content := f[3]
		if string(f[2]) == "F" {
			content = append(append([]byte{}, content...), '\n')
		}
		if string(f[1]) == "stdout" {
			stdout = append(stdout, content...)
		} else {
			stderr = append(stderr, content...)
		}
	}
	return stdout, stderr
}

// stop is the kubelet's graceful kill: StopContainer of the containers
// with the Pod's grace (SIGTERM, SIGKILL after it), then of the sidecars,
// then StopPodSandbox.
func (p *pod) stop(t *testing.T, d *daemon) {
	t.Helper()
	c := ctx(t)
	grace := *p.spec.Spec.TerminationGracePeriodSeconds
	for _, name := range []string{kubernetes.AgentContainer, kubernetes.HolderContainer} {
		if id, ok := p.ids[name]; ok {
			if _, err := d.rt.StopContainer(c, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: grace}); err != nil {
				t.Errorf("StopContainer %s: %v", name, err)
			}
		}
	}
	if _, err := d.rt.StopPodSandbox(c, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandbox}); err != nil {
		t.Errorf("StopPodSandbox: %v", err)
	}
}

// remove stops and removes the Pod and checks that the runtime keeps
// nothing of it.
func (p *pod) remove(t *testing.T, d *daemon) {
	c := ctx(t)
	p.stop(t, d)
	if _, err := d.rt.RemovePodSandbox(c, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandbox}); err != nil {
		t.Errorf("RemovePodSandbox: %v", err)
	}
	sbs, err := d.rt.ListPodSandbox(c, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{Id: p.sandbox}})
	if err != nil || len(sbs.Items) != 0 {
		t.Errorf("sandbox %.12s still listed (%v)", p.sandbox, err)
	}
	ctrs, err := d.rt.ListContainers(c, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: p.sandbox}})
	if err != nil || len(ctrs.Containers) != 0 {
		t.Errorf("%d containers of sandbox %.12s still listed (%v)", len(ctrs.GetContainers()), p.sandbox, err)
	}
}

// info is ContainerStatus's verbose info: the init's host pid and the
// runtime spec containerd gave runc.
func (p *pod) info(t *testing.T, d *daemon, name string) (pid int, spec map[string]any) {
	t.Helper()
	resp, err := d.rt.ContainerStatus(ctx(t), &runtimeapi.ContainerStatusRequest{ContainerId: p.ids[name], Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Pid         int            `json:"pid"`
		RuntimeSpec map[string]any `json:"runtimeSpec"`
	}
	if err := json.Unmarshal([]byte(resp.Info["info"]), &info); err != nil {
		t.Fatal(err)
	}
	return info.Pid, info.RuntimeSpec
}
