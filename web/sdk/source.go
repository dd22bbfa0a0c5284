package sdk

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Source is where the SDK endpoints read flags, segments and secrets and
// record what SDKs report: the database, through the store, in `bunting
// serve`; a relay's memory, synced from its upstream, in `bunting relay`.
// Both serve through the same code, evaluator and limits.
type Source interface {
	// Changes announces changes to flags, segments and secrets; while it is
	// not Live nothing is cached.
	Changes() *feed.Notifier
	// SDKEnvBySecret finds the environment a secret opens:
	// core.ErrUnauthenticated for an unknown one.
	SDKEnvBySecret(ctx context.Context, secret string) (sdkdata.SDKEnv, error)
	// SDKData is an environment's flags and segments, consistent together.
	SDKData(ctx context.Context, env sdkdata.SDKEnv) (sdkdata.EnvData, error)
	// SDKFlag and SDKSegment are one item by id: core.ErrNotFound when gone.
	SDKFlag(ctx context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Flag, error)
	SDKSegment(ctx context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Segment, error)
	// RecordEvaluations counts the evaluations SDKs reported.
	RecordEvaluations(ctx context.Context, env sdkdata.SDKEnv, counts []sdkdata.EvaluationCount, at time.Time) error
	// RecordSDKSeen records an environment's first SDK request.
	RecordSDKSeen(ctx context.Context, env sdkdata.SDKEnv, at time.Time) error
}

// storeSource is the database as a Source.
type storeSource struct{ st *store.Store }

// StoreSource is the store's database as the SDK endpoints' Source.
func StoreSource(st *store.Store) Source { return storeSource{st} }

func (s storeSource) Changes() *feed.Notifier { return s.st.Projects().Changes() }

func (s storeSource) SDKEnvBySecret(ctx context.Context, secret string) (sdkdata.SDKEnv, error) {
	return s.st.SDK().SDKEnvBySecret(ctx, secret)
}

func (s storeSource) SDKData(ctx context.Context, env sdkdata.SDKEnv) (sdkdata.EnvData, error) {
	return s.st.SDK().SDKData(ctx, env)
}

func (s storeSource) SDKFlag(ctx context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Flag, error) {
	return s.st.SDK().SDKFlag(ctx, env, id)
}

func (s storeSource) SDKSegment(ctx context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Segment, error) {
	return s.st.SDK().SDKSegment(ctx, env, id)
}

func (s storeSource) RecordEvaluations(ctx context.Context, env sdkdata.SDKEnv, counts []sdkdata.EvaluationCount, at time.Time) error {
	return s.st.SDK().RecordEvaluations(ctx, env, counts, at)
}

func (s storeSource) RecordSDKSeen(ctx context.Context, env sdkdata.SDKEnv, at time.Time) error {
	return s.st.SDK().RecordSDKSeen(ctx, env, at)
}
