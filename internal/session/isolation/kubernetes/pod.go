package kubernetes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

// Name is the backend's name in refusals.
const Name = "kubernetes"

// The Pod's fixed names and paths. The owner's client (package attach)
// finds the containers by these names.
const (
	AgentContainer   = "agent"
	HolderContainer  = "lease-holder"
	InstallContainer = "loki-install"
	// LokiDir is where the loki image keeps loki-supervise and loki-init.
	LokiDir     = "/loki"
	ControlPath = "/.loki/control"
	BinPath     = "/.loki/bin"
	InitPath    = BinPath + "/loki-init"
	// LaunchAnnotation holds the peer's argv and cwd (never its env): the
	// owner's client reads it from the sandbox when it is given no command.
	LaunchAnnotation = "loki.sh/launch"
)

// DefaultUser is who the agent runs as when no --user is given: an
// image's own root is never used.
var DefaultUser = confine.User{UID: 65534, GID: 65534}

// ErrOptions is an unusable Options value.
var ErrOptions = errors.New("invalid pod options")

// Options are the inputs of Pod.
type Options struct {
	Name, Namespace string
	// Image runs the agent; LokiImage holds LokiDir/loki-supervise and
	// LokiDir/loki-init (static: FROM scratch is enough).
	Image, LokiImage string
	// InitArgs are loki-init's flags (session.Config.InitArgs).
	InitArgs []string
	// Grace is loki-init's -grace: the Pod's termination grace exceeds it
	// so that loki-init's own 128+15 comes before the kubelet's SIGKILL.
	Grace time.Duration
	// RenewInterval and OwnerWait are the holder's --renew-interval and
	// --await-owner.
	RenewInterval, OwnerWait time.Duration
	// Launch is the peer's argv and cwd, kept in LaunchAnnotation.
	Argv []string
	Cwd  string
	// Confine is the session's policy; Binds and WritableRootfs are the
	// bundle flags a Pod expresses too.
	Confine        confine.Policy
	Binds          []Bind
	WritableRootfs bool
	// TTY is the session's -t: asked of Capabilities, never given.
	TTY bool
}

// Bind is a --bind: a node path at a container path.
type Bind struct {
	Source, Destination string
	ReadOnly            bool
}

// Launch is the annotation's value.
type Launch struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
}

// Capabilities is the Pod's entry in the capability table: every knob,
// given in the Pod's own terms or refused with what to do instead.
// Pod admits a policy by these alone, as a session does (session.Admit).
func Capabilities() session.Capabilities {
	given, refused := session.Given, session.Refused
	// Syscalls: loki-init installs the session's policy itself
	// (-seccomp), over the runtime's default profile.
	return session.Capabilities{Init: true, Syscalls: seccomp.Name, Knobs: map[confine.Knob]session.Support{
		confine.KnobUser:            given,
		confine.KnobUserNSPrivate:   refused("hostUsers: false is stripped by an API server without the UserNamespacesSupport gate; use --user UID[:GID]"),
		confine.KnobUserNSHost:      given,
		confine.KnobAllowHost:       refused("a Pod runs no egress proxy; use a NetworkPolicy that allows only those hosts"),
		confine.KnobNetworkLoopback: refused("a Pod's network is the cluster's; use a NetworkPolicy that denies egress"),
		confine.KnobNetworkNone:     refused("a Pod's network is the cluster's; use a NetworkPolicy that denies egress"),
		confine.KnobFSConfined:      given,
		confine.KnobFSHost:          refused("the container sees only its image; use --writable-rootfs and --bind SRC:DST"),
		confine.KnobWrite:           given,
		confine.KnobHide:            given,
		confine.KnobSocket:          refused("a Pod sees the node's sockets only through volumes; mount one with --bind SRC:DST"),
		confine.KnobTmpSize:         refused("a Pod's /tmp is its image's or an emptyDir; set the emptyDir's sizeLimit in the Pod spec"),
		confine.KnobProtect:         refused("the agent's files are its image's and its volumes'; mount what must stay read-only with --bind SRC:DST:ro"),
		confine.KnobPidsMax:         refused("a Pod has no pids limit of its own; set the kubelet's podPidsLimit (e.g. 4096) and drop --pids-max"),
		confine.KnobMemoryMax:       given,
		confine.KnobCPUMax:          given,
		confine.KnobTTY:             refused("attach has no terminal mode; drop --tty"),
	}}
}

// check refuses what a Pod cannot express: the knobs by Capabilities
// (session.Admit, the one judge), then what only a Pod's terms forbid.
func (o Options) check() error {
	if o.Image == "" || o.LokiImage == "" {
		return fmt.Errorf("%w: --image and --loki-image are required", ErrOptions)
	}
	if err := session.Admit(Name, Capabilities(), o.Confine, o.TTY); err != nil {
		return err
	}
	if c := o.Confine.Resources.CPU; c != nil {
		if c.Period != confine.CPUPeriod || c.Quota*1000%int64(c.Period) != 0 {
			return confine.Refuse(Name, "--cpu-max "+c.String()+" (a Pod sets whole millicores over the kubelet's 100 ms period)", "give it in CPUs, e.g. 0.5")
		}
	}
	for _, path := range append(append([]string{}, o.Confine.Write...), o.Confine.Hide...) {
		if !filepath.IsAbs(path) || filepath.Clean(path) != path || path == "/" {
			return fmt.Errorf("%w: %s: want an absolute, clean path other than /", ErrOptions, path)
		}
	}
	if o.Cwd != "" && !filepath.IsAbs(o.Cwd) {
		return fmt.Errorf("%w: --cwd %s: must be absolute inside the container", ErrOptions, o.Cwd)
	}
	return nil
}

// Pod returns the Pod of one session.
func Pod(o Options) (*corev1.Pod, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	user := DefaultUser
	if u := o.Confine.User; u != nil {
		user = *u
	}
	uid, gid := int64(user.UID), int64(user.GID)
	launch, err := json.Marshal(Launch{Argv: o.Argv, Cwd: o.Cwd})
	if err != nil {
		return nil, err
	}
	// The kubelet's SIGKILL must come after loki-init's own kill at
	// -grace, so that the code is loki-init's 128+15.
	termination := int64(math.Ceil(o.Grace.Seconds())) + 5
	volumes := []corev1.Volume{
		emptyDir("control", corev1.StorageMediumMemory, "1Mi"),
		emptyDir("loki-bin", corev1.StorageMediumMemory, "64Mi"),
		emptyDir("tmp", corev1.StorageMediumDefault, ""),
	}
	agentMounts := []corev1.VolumeMount{
		{Name: "control", MountPath: ControlPath, ReadOnly: true},
		{Name: "loki-bin", MountPath: BinPath, ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
	}
	hostPath := corev1.HostPathDirectory
	for i, w := range o.Confine.Write {
		// --write PATH: the node's PATH, writable, at the same path (the
		// oci and docker rule); it must exist on the node.
		name := fmt.Sprintf("write-%d", i)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: w, Type: &hostPath}}})
		agentMounts = append(agentMounts, corev1.VolumeMount{Name: name, MountPath: w})
	}
	for i, b := range o.Binds {
		name := fmt.Sprintf("bind-%d", i)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: b.Source, Type: &hostPath}}})
		agentMounts = append(agentMounts, corev1.VolumeMount{Name: name, MountPath: b.Destination, ReadOnly: b.ReadOnly})
	}
	for i, h := range o.Confine.Hide {
		// --hide PATH: an empty read-only dir over the image's PATH.
		name := fmt.Sprintf("hide-%d", i)
		volumes = append(volumes, emptyDir(name, corev1.StorageMediumMemory, "4Ki"))
		agentMounts = append(agentMounts, corev1.VolumeMount{Name: name, MountPath: h, ReadOnly: true})
	}
	agent := corev1.Container{
		Name:            AgentContainer,
		Image:           o.Image,
		Command:         append(append([]string{InitPath}, o.InitArgs...), "-seccomp", ControlPath),
		Stdin:           true,
		StdinOnce:       true,
		VolumeMounts:    agentMounts,
		SecurityContext: restricted(uid, gid, !o.WritableRootfs),
		Resources:       resources(o.Confine.Resources),
	}
	always := corev1.ContainerRestartPolicyAlways
	holderArgs := []string{LokiDir + "/loki-supervise", "lease", "--control-dir", ControlPath,
		"--renew-interval", o.RenewInterval.String(), "--await-owner", o.OwnerWait.String()}
	install := corev1.Container{
		Name:            InstallContainer,
		Image:           o.LokiImage,
		Command:         []string{LokiDir + "/loki-supervise", "install-init", BinPath},
		VolumeMounts:    []corev1.VolumeMount{{Name: "loki-bin", MountPath: BinPath}},
		SecurityContext: restricted(uid, gid, true),
	}
	holder := corev1.Container{
		Name:            HolderContainer,
		Image:           o.LokiImage,
		Command:         holderArgs,
		RestartPolicy:   &always,
		Stdin:           true,
		StdinOnce:       true,
		VolumeMounts:    []corev1.VolumeMount{{Name: "control", MountPath: ControlPath}},
		SecurityContext: restricted(uid, gid, true),
	}
	nonRoot := uid != 0
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        o.Name,
			Namespace:   o.Namespace,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "loki"},
			Annotations: map[string]string{LaunchAnnotation: string(launch)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ShareProcessNamespace:         ptr(false),
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			TerminationGracePeriodSeconds: &termination,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: &uid, RunAsGroup: &gid, RunAsNonRoot: &nonRoot,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			InitContainers: []corev1.Container{install, holder},
			Containers:     []corev1.Container{agent},
			Volumes:        volumes,
		},
	}, nil
}

// restricted is every container's securityContext: the Pod Security
// "restricted" profile, with the user named again so that no image's USER
// can override it.
func restricted(uid, gid int64, readOnlyRoot bool) *corev1.SecurityContext {
	nonRoot := uid != 0
	return &corev1.SecurityContext{
		RunAsUser: &uid, RunAsGroup: &gid, RunAsNonRoot: &nonRoot,
		Privileged:               ptr(false),
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   &readOnlyRoot,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// resources are the agent's limits, with equal requests: no swap beyond
// the memory limit (the kubelet gives swap only to Burstable Pods), and
// the scheduler reserves what the session may use.
func resources(r confine.Resources) corev1.ResourceRequirements {
	l := corev1.ResourceList{}
	if r.MemoryMax > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(r.MemoryMax, resource.BinarySI)
	}
	if c := r.CPU; c != nil {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(c.Quota*1000/int64(c.Period), resource.DecimalSI)
	}
	if len(l) == 0 {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Limits: l, Requests: l.DeepCopy()}
}

func emptyDir(name string, medium corev1.StorageMedium, size string) corev1.Volume {
	src := &corev1.EmptyDirVolumeSource{Medium: medium}
	if size != "" {
		q := resource.MustParse(size)
		src.SizeLimit = &q
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: src}}
}

func ptr[T any](v T) *T { return &v }

// ParseLaunch reads LaunchAnnotation's value.
func ParseLaunch(s string) (Launch, error) {
	var l Launch
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&l); err != nil || len(l.Argv) == 0 {
		return Launch{}, fmt.Errorf("%w: annotation %s: no argv", ErrOptions, LaunchAnnotation)
	}
	return l, nil
}
