package runner

import (
	"context"
	"log/slog"
	"time"
)

// flushLoop calls flush every period, or sooner when kick is signalled,
// until ctx ends; what names the batches in the log. A write under way
// finishes when ctx ends (within 10 s), so stopping never loses a batch
// already taken from its buffer. The last write is the caller's: Flush
// after the SDK endpoints stopped taking requests.
func flushLoop(ctx context.Context, period time.Duration, kick <-chan struct{}, flush func(context.Context) error, log *slog.Logger, what string) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := flush(wctx); err != nil {
			log.WarnContext(ctx, "writing "+what, "err", err)
		}
		cancel()
	}
}
