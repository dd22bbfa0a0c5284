package sdkdata

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// SDKEnv is the environment an SDK secret opens, and what kind of secret it is.
type SDKEnv struct {
	EnvID    uuid.UUID
	OrgID    uuid.UUID
	SecretID uuid.UUID
	// SecretType is SecretServer or SecretClient.
	SecretType string
}

// SDKEnvBySecret finds the environment a secret opens: the secret must be
// well formed (its second half names the environment) and stored. Anything
// else is ErrUnauthenticated; ErrUnavailable means the database did not answer.
func (s *SDK) SDKEnvBySecret(ctx context.Context, secret string) (SDKEnv, error) {
	envID, ok := core.SecretEnvID(secret)
	if !ok || envID == uuid.Nil {
		return SDKEnv{}, core.ErrUnauthenticated
	}
	row, err := s.core.Q.GetSecretByValue(ctx, secret)
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) || (err == nil && row.EnvID != envID) {
		return SDKEnv{}, core.ErrUnauthenticated
	}
	if err != nil {
		return SDKEnv{}, err
	}
	return SDKEnv{EnvID: row.EnvID, OrgID: row.OrganizationID, SecretID: row.ID, SecretType: row.Type}, nil
}

// EnvData is what SDKs of an environment evaluate with.
type EnvData struct {
	// Flags are every flag of the environment, archived ones too, by key.
	Flags []flagstore.Flag
	// Segments are the segments visible in the environment, archived ones
	// too. A shared segment carries this environment's id as its EnvID, as
	// FeatBit sends it to SDKs.
	Segments []flagstore.Segment
}

// SDKData reads an environment's flags and segments as one consistent snapshot.
func (s *SDK) SDKData(ctx context.Context, env SDKEnv) (EnvData, error) {
	var out EnvData
	err := pgx.BeginTxFunc(ctx, s.core.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := core.Queries(tx)
		e, err := q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: env.OrgID, ID: env.EnvID})
		if err != nil {
			return err
		}
		flags, err := q.ListEnvFlags(ctx, env.EnvID)
		if err != nil {
			return err
		}
		out.Flags = make([]flagstore.Flag, len(flags))
		for i, r := range flags {
			if out.Flags[i], err = flagstore.FlagFrom(r); err != nil {
				return err
			}
		}
		segRows, err := q.ListEnvSegments(ctx, db.ListEnvSegmentsParams{OrganizationID: env.OrgID, EnvID: env.EnvID,
			Scopes: flagstore.EnvScopes(core.EnvRow{GetEnvironmentRow: e})})
		if err != nil {
			return err
		}
		if out.Segments, err = segments.SegmentsFrom(segRows); err != nil {
			return err
		}
		for i := range out.Segments {
			out.Segments[i].EnvID = env.EnvID
		}
		return nil
	})
	return out, core.Translate(err)
}

// SDKFlag returns one flag of an SDK's environment by id.
func (s *SDK) SDKFlag(ctx context.Context, env SDKEnv, id uuid.UUID) (flagstore.Flag, error) {
	row, err := s.core.Q.GetFlagByID(ctx, db.GetFlagByIDParams{EnvID: env.EnvID, ID: id})
	if err != nil {
		return flagstore.Flag{}, core.Translate(err)
	}
	return flagstore.FlagFrom(row)
}

// SDKSegment returns a segment visible in an SDK's environment, with that
// environment as its EnvID.
func (s *SDK) SDKSegment(ctx context.Context, env SDKEnv, id uuid.UUID) (flagstore.Segment, error) {
	e, err := s.core.Q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: env.OrgID, ID: env.EnvID})
	if err != nil {
		return flagstore.Segment{}, core.Translate(err)
	}
	row, err := s.core.Q.GetSegment(ctx, db.GetSegmentParams{OrganizationID: env.OrgID, ID: id})
	if err != nil {
		return flagstore.Segment{}, core.Translate(err)
	}
	sg, err := segments.SegmentFrom(row)
	if err != nil {
		return flagstore.Segment{}, err
	}
	if !flagstore.VisibleIn(sg, core.EnvRow{GetEnvironmentRow: e}) {
		return flagstore.Segment{}, core.ErrNotFound
	}
	sg.EnvID = env.EnvID
	return sg, nil
}

// Limits of end users given to the evaluator.
const (
	maxUserProperties = 100
	maxPropertyLen    = 1024
)

// CheckEndUser reports what is wrong with an end user: a key is required,
// and keys, names and properties have bounded sizes.
func CheckEndUser(u eval.EndUser) error {
	var v core.Validator
	switch {
	case strings.TrimSpace(u.KeyID) == "":
		v.Add("keyId", "required")
	case !targeting.Storable(u.KeyID, targeting.MaxKeyIDLen):
		v.Add("keyId", "invalid")
	}
	if u.Name != nil && !targeting.Storable(*u.Name, core.MaxNameLen) {
		v.Add("name", "invalid")
	}
	if len(u.CustomizedProperties) > maxUserProperties {
		v.Add("customizedProperties", "invalid")
	} else {
		for _, p := range u.CustomizedProperties {
			if strings.TrimSpace(p.Name) == "" || !targeting.Storable(p.Name, core.MaxNameLen) || !targeting.Storable(p.Value, maxPropertyLen) {
				v.Add("customizedProperties", "invalid")
				break
			}
		}
	}
	return v.Err()
}

// EvaluateFlag evaluates a flag for an end user, as SDKs of the environment
// would: the admin pages' "test a user". An archived flag evaluates to no
// variation, as FeatBit's SDKs find nothing.
func (s *SDK) EvaluateFlag(ctx context.Context, a *core.Actor, envID uuid.UUID, key string, u eval.EndUser) (eval.Evaluation, error) {
	if err := CheckEndUser(u); err != nil {
		return eval.Evaluation{}, err
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return eval.Evaluation{}, err
	}
	row, err := s.core.Q.GetFlag(ctx, db.GetFlagParams{EnvID: env.Environment.ID, Key: key})
	if err != nil {
		return eval.Evaluation{}, core.Translate(err)
	}
	f, err := flagstore.FlagFrom(row)
	if err != nil {
		return eval.Evaluation{}, err
	}
	var segs []flagstore.Segment
	if len(row.SegmentRefs) > 0 {
		rows, err := s.core.Q.SegmentsByIDs(ctx, db.SegmentsByIDsParams{OrganizationID: env.OrganizationID, Ids: row.SegmentRefs,
			EnvID: envID, Scopes: flagstore.EnvScopes(env)})
		if err != nil {
			return eval.Evaluation{}, core.Translate(err)
		}
		if segs, err = segments.SegmentsFrom(rows); err != nil {
			return eval.Evaluation{}, err
		}
	}
	return eval.Evaluate(&f, u, eval.SegmentMap(segs)), nil
}
