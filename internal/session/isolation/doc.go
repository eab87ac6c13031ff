// Package isolation holds the session backends, one package each
// (namespace, oci, docker, none). Each declares what it gives as
// session.Capabilities, and session.Admit refuses a policy by those
// alone; this package's test holds every backend, and the Pod that
// kubernetes prints (pod-spec), to a declaration of every confine.Knob,
// with the refusal line a user reads.
package isolation
