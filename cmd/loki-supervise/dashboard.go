package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	"github.com/loki-sh/loki/internal/execution/sandbox/provider"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/pycompat"
)

// The commands in this file answer what a dashboard used to import from
// the reference supervisor module (docs/dashboard.md has the mapping).
// Each prints, with --json, exactly the value the reference function
// returns, as one line of JSON.

// maxFields bounds update-state's input: a record is small, and the whole
// record is rewritten on every update.
const maxFields = 1 << 20

// jsonFlag is the dashboard commands' --json.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the result as one line of JSON"}

func identityCommand() *cli.Command {
	return &cli.Command{
		Name:      "identity",
		Usage:     "print the host confinement identity of a workspace root (the engine manifest's config id)",
		UsageText: "loki-supervise identity --workspace-root DIR --run-sh PATH [--json]",
		Description: "Validates the host boundary (LOKI_HOST_PROTECTED_ROOT, LOKI_WORKSPACE_ROOTS,\n" +
			"LOKI_HOST_RUNTIME_READ_PATHS, LOKI_HOST_RUNTIME_WRITE_PATHS, LOKI_HOST_CHILD_PATH,\n" +
			"LOKI_HOST_RESERVED_PORTS; docs/macos.md) and prints {workspace_root, protected_root,\n" +
			"runtime_read_paths, runtime_write_paths, child_path, reserved_ports, config_sha256}: the\n" +
			"reference's host_confinement_identity. DIR must be an entry of LOKI_WORKSPACE_ROOTS.\n" +
			"Exit 0, or 2 naming the setting that is wrong. Works on any system (nothing is run).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace-root", Required: true, Usage: "an entry of LOKI_WORKSPACE_ROOTS"},
			&cli.StringFlag{Name: "run-sh", Required: true, Usage: "the engine's run.sh (two levels up is the engine source)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			id, err := boundary.IdentityOf(boundary.Environ, c.String("workspace-root"), c.String("run-sh"))
			if err != nil {
				return probeError(err)
			}
			return printValue(c, id.Map(), c.Bool("json"))
		},
	}
}

func authStatusCommand() *cli.Command {
	return &cli.Command{
		Name:      "auth-status",
		Usage:     "check a provider's login and one live request inside an existing workspace's Seatbelt boundary",
		UsageText: "loki-supervise auth-status --provider NAME --workspace DIR --run-sh PATH --spec FILE [--json]",
		Description: "The reference's confined_provider_auth_status for a workspace that exists (probe\n" +
			"provider-auth makes a throwaway one instead). Without LOKI_HOST_SEATBELT=1 it answers\n" +
			"available/seatbelt_not_enabled and runs nothing. Prints {provider, available,\n" +
			"classification, action[, live_inference_passed]}; the provider's output is never shown.\n" +
			"Exit 0 when available, 1 when not, 2 for an invalid boundary or a missing path.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Required: true, Usage: "claude, codex, cline, ..."},
			&cli.StringFlag{Name: "workspace", Required: true, Usage: "the build's workspace `DIR`"},
			&cli.StringFlag{Name: "run-sh", Required: true, Usage: "the engine's run.sh"},
			&cli.StringFlag{Name: "spec", Required: true, Usage: "the build's spec `FILE`"},
			jsonFlag,
		},
		Action: authStatus,
	}
}

func updateStateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update-state",
		Usage:     "merge fields into an execution's record, under its lock",
		UsageText: "loki-supervise update-state UUID FIELDS|- [--json]",
		Description: "The reference's update_state: FIELDS (a JSON object, or - to read it from stdin) is\n" +
			"merged into state.json like dict.update, under the record's flock, written atomically\n" +
			"(0600, fsynced), creating the record {schema_version, execution_id} when there is none.\n" +
			"--json prints the merged record. Refused (exit 2, nothing written): an id that is not a\n" +
			"UUID, input that is not one JSON object, not UTF-8, larger than 1 MiB, or holding NaN or\n" +
			"Infinity (the record could not be read back) or a lone surrogate escape.",
		Flags:  []cli.Flag{jsonFlag},
		Action: updateState,
	}
}

func procCommand() *cli.Command {
	return &cli.Command{
		Name:  "proc",
		Usage: "process identity checks, as the dashboard makes them before it trusts a recorded pid",
		Description: "Each subcommand prints the reference function's value (with --json as JSON) and exits\n" +
			"0 when that value is non-empty or true, 1 otherwise. A PID that is not an integer is no\n" +
			"process (as the reference treats it), not an error.",
		Subcommands: []*cli.Command{
			procSubcommand("token",
				"print the birth token of PID (process_birth_token): proc:<boot_id>:<start>, darwin:<s>:<us>, ps:...",
				"loki-supervise proc token PID [--json]", 1,
				func(args []string) (any, bool) {
					tok := ""
					if pid, ok := pycompat.Int(args[0]); ok && pid > 0 {
						tok, _ = procid.BirthToken(pid)
					}
					return tok, tok != ""
				}),
			procSubcommand("matches",
				"is PID live, not a zombie, signalable by us, with birth token TOKEN? (process_identity_matches)",
				"loki-supervise proc matches PID TOKEN [--json]", 2,
				func(args []string) (any, bool) {
					pid, ok := pycompat.Int(args[0])
					match := ok && procid.TokenMatches(pid, args[1])
					return match, match
				}),
			procSubcommand("state",
				"print the one-letter state of PID, e.g. S, R, Z (process_state)",
				"loki-supervise proc state PID [--json]", 1,
				func(args []string) (any, bool) {
					letter := ""
					if pid, ok := pycompat.Int(args[0]); ok {
						letter = procid.StateLetter(pid)
					}
					return letter, letter != ""
				}),
		},
	}
}

// procSubcommand is one proc check: answer takes the n arguments and
// returns the value to print and whether it counts as true (exit 0).
func procSubcommand(name, usage, usageText string, n int, answer func(args []string) (any, bool)) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		UsageText: usageText,
		Flags:     []cli.Flag{jsonFlag},
		// A pid such as -1 is a value here, not a flag.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args, asJSON, err := procArgs(c, n)
			if err != nil {
				return err
			}
			v, truthy := answer(args)
			return printAnswer(c, v, asJSON, truthy)
		},
	}
}

func authStatus(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := provider.Default().Status(ctx, c.String("provider"), c.String("workspace"), c.String("run-sh"), c.String("spec"))
	if errors.Is(err, fs.ErrNotExist) {
		return exitcode.Usage(err)
	}
	if err != nil {
		return probeError(err)
	}
	if err := printValue(c, res.Map(), c.Bool("json")); err != nil {
		return err
	}
	if !res.Available {
		return exitcode.Failed(nil)
	}
	return nil
}

func updateState(c *cli.Context) error {
	args, asJSON := splitJSONFlag(c)
	if len(args) != 2 {
		return exitcode.Usage(errors.New("update-state takes an execution id and a JSON object (or - for stdin); see --help"))
	}
	id, err := state.ParseID(args[0])
	if err != nil {
		return exitcode.Usage(fmt.Errorf("%q: %w", args[0], err))
	}
	raw := []byte(args[1])
	if args[1] == "-" {
		if raw, err = io.ReadAll(io.LimitReader(c.App.Reader, maxFields+1)); err != nil {
			return exitcode.Failed(fmt.Errorf("update-state: read stdin: %w", err))
		}
	}
	fields, err := parseFields(raw)
	if err != nil {
		return exitcode.Usage(err)
	}
	store, err := state.DefaultStore()
	if err != nil {
		return exitcode.Failed(err)
	}
	st, err := store.Update(id, fields)
	if err != nil {
		return exitcode.Failed(err)
	}
	if !asJSON {
		return nil
	}
	return printValue(c, map[string]any(st), true)
}

// Sentinels of update-state's input check.
var (
	errFieldsTooLarge = errors.New("update-state: FIELDS is larger than 1 MiB")
	errFieldsNotObj   = errors.New("update-state: FIELDS must be one JSON object")
	errFieldsNonFinit = errors.New("update-state: FIELDS holds NaN or Infinity, which a record cannot keep (state.json would no longer parse as JSON)")
)

// parseFields reads the update as Python's json.loads would, and refuses
// what the record could not hold faithfully.
func parseFields(raw []byte) (map[string]any, error) {
	if len(raw) > maxFields {
		return nil, errFieldsTooLarge
	}
	v, err := canonjson.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("update-state: FIELDS: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errFieldsNotObj
	}
	if !finite(m) {
		return nil, errFieldsNonFinit
	}
	return m, nil
}

func finite(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	}
	return true
}

// splitJSONFlag takes --json out of the arguments: urfave/cli stops
// reading flags at the first argument, and `proc token 123 --json` is the
// natural spelling.
func splitJSONFlag(c *cli.Context) ([]string, bool) { return splitBoolFlag(c, "json") }

// splitBoolFlag takes the boolean flag name (--name or -name) out of the
// arguments wherever it stands, and reports whether it was set there or
// before them.
func splitBoolFlag(c *cli.Context, name string) ([]string, bool) {
	set := c.Bool(name)
	var rest []string
	for _, a := range c.Args().Slice() {
		if a == "--"+name || a == "-"+name {
			set = true
			continue
		}
		rest = append(rest, a)
	}
	return rest, set
}

// procArgs reads a proc subcommand's arguments, which urfave/cli leaves
// unparsed (SkipFlagParsing) so that "-1" is a pid: --json anywhere,
// --help or -h alone.
func procArgs(c *cli.Context, n int) ([]string, bool, error) {
	args, asJSON := splitJSONFlag(c)
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprintf(c.App.Writer, "NAME:\n   loki-supervise proc %s - %s\n\nUSAGE:\n   %s\n\nExit 0 when the answer is non-empty or true, 1 otherwise.\n",
			c.Command.Name, c.Command.Usage, c.Command.UsageText)
		return nil, false, exitcode.Exited(0)
	}
	if len(args) != n {
		return nil, false, exitcode.Usage(fmt.Errorf("wrong number of arguments; usage: %s", c.Command.UsageText))
	}
	return args, asJSON, nil
}

func noArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return exitcode.Usage(fmt.Errorf("%s: unexpected argument %q (see --help)", c.Command.Name, c.Args().First()))
	}
	return nil
}

// printValue prints v as one line of canonical JSON with --json, indented
// otherwise.
func printValue(c *cli.Context, v any, asJSON bool) error {
	if !asJSON {
		return printJSON(c, v)
	}
	b, err := canonjson.Marshal(v)
	if err != nil {
		return exitcode.Refused(err)
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s\n", b)
	return err
}

// printAnswer prints a proc answer (JSON, or its plain text) and exits 1
// when it is empty or false.
func printAnswer(c *cli.Context, v any, asJSON, truthy bool) error {
	if asJSON {
		if err := printValue(c, v, true); err != nil {
			return err
		}
	} else if s := fmt.Sprint(v); s != "" {
		fmt.Fprintln(c.App.Writer, s)
	}
	if !truthy {
		return exitcode.Failed(nil)
	}
	return nil
}
