package pid1

import "github.com/loki-sh/loki/internal/launch"

// classes lists every error whose text may appear in a refusal line.
var classes = []error{
	ErrUnsupported, ErrNotPID1, ErrUsage, ErrProtect, ErrCwd, ErrSpawn,
	ErrOutputLost, ErrOutputHeld, ErrEOFCut, ErrPeerSignal,
	launch.ErrSize, launch.ErrTruncated, launch.ErrSyntax, launch.ErrType,
	launch.ErrEmptyArgv, launch.ErrRelativeCwd, launch.ErrNUL,
	launch.ErrEnvName, launch.ErrNotExecutable,
}
