package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session/doctor"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "show what confinement this host can give a session, and how to get what is missing",
		UsageText: "loki-supervise doctor [--json]",
		Description: `Tries, as the user running it, what sessions need: new PID and mount namespaces (the
default namespace backend; as root also a private user namespace with an idmapped
mount of the current dir), user and network namespaces (with the sysctls that restrict
them: user.max_user_namespaces, kernel.unprivileged_userns_clone, Ubuntu's
kernel.apparmor_restrict_unprivileged_userns), a session cgroup per controller (pids,
memory, cpu: made and removed for real; cgroup v1, v2 or hybrid), the Landlock ABI, and
crun, runc, a Docker engine, and loki-kube beside this binary (pod-spec and attach run
it). Each missing item gets a one-line fix.

Exit code: 0 when the default session (loki-supervise session -- CMD) can run here, 1
when it cannot (a FAIL line says why); missing optional items never fail it.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object instead of text"},
			&cli.BoolFlag{Name: "self-probe", Hidden: true},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("self-probe") {
				// Run inside the namespaces being probed; a probe that
				// needs it alive holds its stdin open.
				_, err := io.Copy(io.Discard, os.Stdin)
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return exitcode.NotLaunched(err)
			}
			r := doctor.Run(self, []string{"doctor", "--self-probe"})
			probeSessions(&r, self)
			r.Set(kubeCheck())
			if c.Bool("json") {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				r.Text(os.Stdout)
			}
			if !r.DefaultSession {
				return exitcode.Failed(errors.New("the default session cannot run on this host"))
			}
			return nil
		},
	}
}
