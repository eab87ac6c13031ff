package execution

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/loki-sh/loki/internal/execution/state"
)

// CopyLog writes runner.log to w. With follow it keeps copying new bytes
// until the execution has exited (or its supervisor is lost) and the log
// is drained, or ctx ends.
func CopyLog(ctx context.Context, store *state.Store, id state.ID, w io.Writer, follow bool, poll time.Duration) error {
	if _, err := store.Read(id); err != nil {
		return err
	}
	f, err := state.OpenRegular(store.Path(id, state.LogFile))
	if errors.Is(err, fs.ErrNotExist) && follow {
		f, err = waitForLog(ctx, store, id, poll)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil // launched nothing yet, or launch failed: empty log
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		st, err := store.Read(id)
		if err != nil || st.Str(state.FieldState) == state.StateExited || !SupervisorAlive(st) {
			// The writer is done: whatever is left was written before
			// this read of the record.
			_, err := io.Copy(w, f)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

func waitForLog(ctx context.Context, store *state.Store, id state.ID, poll time.Duration) (*os.File, error) {
	for {
		f, err := state.OpenRegular(store.Path(id, state.LogFile))
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
		st, rerr := store.Read(id)
		if rerr != nil || st.Str(state.FieldState) == state.StateExited || !SupervisorAlive(st) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(poll):
		}
	}
}
