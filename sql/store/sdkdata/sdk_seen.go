package sdkdata

import (
	"context"
	"time"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// RecordSDKSeen notes that an environment's SDK secret was used, at at;
// only the first time is kept. The SDK endpoints call it once per
// environment and process, so it costs one statement per environment.
func (s *SDK) RecordSDKSeen(ctx context.Context, env SDKEnv, at time.Time) error {
	return core.Translate(s.core.Q.RecordSDKSeen(ctx, db.RecordSDKSeenParams{EnvID: env.EnvID, At: at}))
}

// SDKFirstSeen returns when an environment first saw an SDK (a data-sync,
// an evaluation report, an OFREP evaluation), or nil when none has come
// yet. The caller must be able to open the environment.
func (s *SDK) SDKFirstSeen(ctx context.Context, a *core.Actor, envID uuid.UUID) (*time.Time, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	r, err := s.core.Q.SDKFirstSeen(ctx, envID)
	if err != nil || !r.Seen {
		return nil, core.Translate(err)
	}
	return &r.FirstSeenAt, nil
}
