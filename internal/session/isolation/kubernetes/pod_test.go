package kubernetes

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/loki-sh/loki/internal/session/confine"
)

func base() Options {
	return Options{Name: "s1", Image: "agent:1", LokiImage: "loki:1", InitArgs: []string{"-lease-duration", "5s"},
		Grace: 10 * time.Second, RenewInterval: time.Second, OwnerWait: time.Minute, Argv: []string{"agent", "--acp"}, Cwd: "/"}
}

// TestPodRefuses: every knob a Pod cannot express is refused, never
// dropped, with confine.ErrUnsupported (127) or ErrOptions (2).
func TestPodRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Options)
		want error
	}{
		{"userns private", func(o *Options) { o.Confine.UserNS = confine.UserNSPrivate }, confine.ErrUnsupported},
		{"network none", func(o *Options) { o.Confine.Network = confine.NetworkNone }, confine.ErrUnsupported},
		{"network loopback", func(o *Options) { o.Confine.Network = confine.NetworkLoopback }, confine.ErrUnsupported},
		{"allow-host", func(o *Options) {
			o.Confine.Network, o.Confine.Allow = confine.NetworkLoopback, []string{"api.example.com"}
		}, confine.ErrUnsupported},
		{"fs host", func(o *Options) { o.Confine.FS = confine.FSHost }, confine.ErrUnsupported},
		{"pids-max", func(o *Options) { o.Confine.Resources.PidsMax = 100 }, confine.ErrUnsupported},
		{"tty", func(o *Options) { o.TTY = true }, confine.ErrUnsupported},
		{"allow-host with network none", func(o *Options) {
			o.Confine.Network, o.Confine.Allow = confine.NetworkNone, []string{"api.example.com"}
		}, confine.ErrPolicy},
		{"cpu period", func(o *Options) { o.Confine.Resources.CPU = &confine.CPUMax{Quota: 25000, Period: 50000} }, confine.ErrUnsupported},
		{"cpu fraction of a millicore", func(o *Options) { o.Confine.Resources.CPU = &confine.CPUMax{Quota: 50050, Period: 100000} }, confine.ErrUnsupported},
		{"no image", func(o *Options) { o.Image = "" }, ErrOptions},
		{"relative write", func(o *Options) { o.Confine.Write = []string{"work"} }, ErrOptions},
		{"relative cwd", func(o *Options) { o.Cwd = "work" }, ErrOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.edit(&o)
			if _, err := Pod(o); !errors.Is(err, tc.want) {
				t.Fatalf("Pod() error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestPodTerms: the policy in the Pod's terms.
func TestPodTerms(t *testing.T) {
	o := base()
	o.Confine = confine.Policy{User: &confine.User{UID: 1000, GID: 100}, Write: []string{"/srv/work"}, Hide: []string{"/secret"},
		Resources: confine.Resources{MemoryMax: 64 << 20, CPU: &confine.CPUMax{Quota: 50000, Period: 100000}}}
	pod, err := Pod(o)
	if err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	if s.ShareProcessNamespace == nil || *s.ShareProcessNamespace || s.RestartPolicy != corev1.RestartPolicyNever || *s.TerminationGracePeriodSeconds != 15 {
		t.Errorf("pod spec: shareProcessNamespace %v, restartPolicy %s, grace %d", s.ShareProcessNamespace, s.RestartPolicy, *s.TerminationGracePeriodSeconds)
	}
	if len(s.InitContainers) != 2 || s.InitContainers[1].Name != HolderContainer || s.InitContainers[1].RestartPolicy == nil ||
		*s.InitContainers[1].RestartPolicy != corev1.ContainerRestartPolicyAlways || !s.InitContainers[1].StdinOnce {
		t.Fatalf("the holder is not a native sidecar with stdinOnce: %+v", s.InitContainers)
	}
	agent := s.Containers[0]
	if agent.Command[0] != InitPath || agent.Command[len(agent.Command)-1] != ControlPath || agent.Command[len(agent.Command)-2] != "-seccomp" || !agent.Stdin || !agent.StdinOnce {
		t.Errorf("agent command %v stdin %v/%v", agent.Command, agent.Stdin, agent.StdinOnce)
	}
	sc := agent.SecurityContext
	if *sc.RunAsUser != 1000 || *sc.RunAsGroup != 100 || !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("agent securityContext %+v", sc)
	}
	if m, c := agent.Resources.Limits[corev1.ResourceMemory], agent.Resources.Limits[corev1.ResourceCPU]; m.Value() != 64<<20 || c.MilliValue() != 500 {
		t.Errorf("limits memory %s cpu %s", m.String(), c.String())
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range agent.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if !mounts[ControlPath].ReadOnly || !mounts["/secret"].ReadOnly || mounts["/srv/work"].ReadOnly || mounts["/tmp"].ReadOnly {
		t.Errorf("agent mounts %+v", agent.VolumeMounts)
	}
	l, err := ParseLaunch(pod.Annotations[LaunchAnnotation])
	if err != nil || !slices.Equal(l.Argv, o.Argv) || l.Cwd != "/" {
		t.Errorf("launch annotation %q: %v %v", pod.Annotations[LaunchAnnotation], l, err)
	}
	// The default user is nobody, never the image's USER.
	pod, _ = Pod(base())
	if u := pod.Spec.SecurityContext.RunAsUser; u == nil || *u != 65534 {
		t.Errorf("default runAsUser %v", u)
	}
}
