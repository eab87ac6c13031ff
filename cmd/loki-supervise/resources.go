package main

import (
	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/session/confine"
)

// resourceFlags are the session's cgroup limits (shared with oci-spec).
func resourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "pids-max", Aliases: []string{"pids-limit"},
			Usage: "at most N tasks (processes and threads) in the session; 0 or max: no limit (default 4096 on namespace, oci, docker)"},
		&cli.StringFlag{Name: "memory-max",
			Usage: "memory of the whole session, e.g. 512M or 2G (K/M/G/T = 1024^n; no swap beyond it); the kernel OOM-kills at it and the session exits 137"},
		&cli.StringFlag{Name: "cpu-max",
			Usage: "CPU bandwidth: a number of CPUs (0.5, 2) or \"QUOTA PERIOD\" in microseconds as cgroup v2's cpu.max"},
		&cli.StringFlag{Name: "tmp-size",
			Usage: "size of each private tmpfs, /tmp and /dev/shm (e.g. 2G); their pages count against --memory-max (default 512M, or half of --memory-max when smaller)"},
	}
}

// parseResources reads the resource flags into a policy's Resources.
func parseResources(c *cli.Context) (confine.Resources, error) {
	pids, err := confine.ParsePidsMax(c.String("pids-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	mem, err := confine.ParseMemoryMax(c.String("memory-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	cpu, err := confine.ParseCPUMax(c.String("cpu-max"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	tmp, err := confine.ParseTmpSize(c.String("tmp-size"))
	if err != nil {
		return confine.Resources{}, usage("%v", err)
	}
	return confine.Resources{PidsMax: pids, MemoryMax: mem, CPU: cpu, TmpSize: tmp}, nil
}
