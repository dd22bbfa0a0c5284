package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"
)

// floor is the benchmark's lower bound: for each scenario a bare Echo
// handler that runs only the essential SQL with pgx (no authentication, no
// permission check, no validation, no envelope) and lets PostgreSQL build the
// JSON. Writes run the same statements Bunting's change needs, in one
// transaction: lock the row, update it, insert its revision and its audit
// entry. Bunting's throughput divided by the floor's, measured in the same
// run on the same machine, is what Bunting costs on top of the database.
type floor struct {
	e    *echo.Echo
	pool *pgxpool.Pool
	key  []byte
}

func newFloor(pool *pgxpool.Pool) *floor {
	f := &floor{e: echo.New(), pool: pool, key: []byte(rand.Text())}
	f.e.HideBanner, f.e.HidePort = true, true
	g := f.e.Group("/floor")
	g.GET("/envs/:env/flags/:key", f.getFlag)
	g.GET("/envs/:env/flags", f.searchFlags)
	g.POST("/envs/:env/flags", f.createFlag)
	g.PUT("/envs/:env/flags/:key/description", f.flagDescription)
	g.PUT("/envs/:env/flags/:key/targeting", f.flagTargeting)
	g.GET("/orgs/:org/envs/:env/segments/by-ids", f.segmentsByIDs)
	g.PATCH("/orgs/:org/segments/:id", f.patchSegment)
	g.GET("/orgs/:org/policies/:id/members", f.policyMembers)
	g.POST("/login", f.login)
	g.POST("/envs/:env/insight", f.insight)
	g.POST("/envs/:env/compare/:target", f.compare)
	registerOFREPFloor(f.e)
	registerExperimentFloor(f)
	registerProfiles(f.e)
	return f
}

// floorJSON answers JSON that is already encoded.
func floorJSON(c echo.Context, body []byte) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

// floorError answers a failure with its status and nothing else.
func floorError(c echo.Context, err error) error {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return c.NoContent(http.StatusNotFound)
	case errors.Is(err, errFloorConflict):
		return c.NoContent(http.StatusConflict)
	}
	c.Logger().Error(err)
	return c.NoContent(http.StatusInternalServerError)
}

var errFloorConflict = errors.New("revision changed")

func (f *floor) getFlag(c echo.Context) error {
	var body []byte
	err := f.pool.QueryRow(c.Request().Context(), `-- name: floor.GetFlag
		SELECT to_jsonb(f) FROM feature_flags f WHERE env_id = $1 AND lower(key) = lower($2::text) AND key = $2::text`,
		c.Param("env"), c.Param("key")).Scan(&body)
	if err != nil {
		return floorError(c, err)
	}
	return floorJSON(c, body)
}

// searchFlags answers a page of the flags whose name or key contains a text,
// newest first, with the number of matches counted in the same query.
func (f *floor) searchFlags(c echo.Context) error {
	pattern := "%" + strings.ToLower(c.QueryParam("name")) + "%"
	rows, err := f.pool.Query(c.Request().Context(), `-- name: floor.SearchFlags
		SELECT count(*) OVER (), to_jsonb(f) FROM feature_flags f
		WHERE env_id = $1 AND NOT is_archived AND (lower(name) || ' ' || lower(key)) LIKE $2
		ORDER BY created_at DESC, id LIMIT 10`, c.Param("env"), pattern)
	if err != nil {
		return floorError(c, err)
	}
	var total int64
	var items []json.RawMessage
	for rows.Next() {
		var item json.RawMessage
		if err := rows.Scan(&total, &item); err != nil {
			return floorError(c, err)
		}
		items = append(items, item)
	}
	if err := rows.Err(); err != nil {
		return floorError(c, err)
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return c.JSON(http.StatusOK, map[string]any{"totalCount": total, "items": items})
}

// Floor SQL shared by the flag writes: a revision and an audit entry, whose
// workspace and organization come from the environment in the same statement.
const (
	floorInsertRevision = `-- name: floor.InsertFlagRevision
		INSERT INTO flag_revisions (flag_id, revision, snapshot, comment, creator_id, creator_kind)
		VALUES ($1, $2, $3, '', $4, 'system')`
	floorInsertFlagAudit = `-- name: floor.InsertAuditLog
		INSERT INTO audit_logs (workspace_id, organization_id, env_id, ref_type, ref_id, keyword, operation,
			previous, current, comment, creator_id, creator_kind)
		SELECT o.workspace_id, o.id, e.id, 'FeatureFlag', $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, '', $7::uuid, 'system'
		FROM environments e JOIN projects p ON p.id = e.project_id JOIN organizations o ON o.id = p.organization_id
		WHERE e.id = $1`
)

// floorActor is who the floor's changes are attributed to.
var floorActor = uuid.Nil

func (f *floor) createFlag(c echo.Context) error {
	var in struct{ Name, Key string }
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	ctx, env := c.Request().Context(), c.Param("env")
	var created []byte
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var id, revision uuid.UUID
		err := tx.QueryRow(ctx, `-- name: floor.CreateFlag
			INSERT INTO feature_flags (env_id, key, name, variation_type, variations, disabled_variation_id,
				fallthrough, revision, creator_id, updator_id)
			VALUES ($1, $2, $3, 'boolean',
				'[{"id":"on","name":"True","value":"true"},{"id":"off","name":"False","value":"false"}]', 'off',
				'{"dispatchKey":null,"includedInExpt":true,"variations":[{"id":"on","rollout":[0,1],"exptRollout":1}]}',
				gen_random_uuid(), $4, $4)
			RETURNING id, revision, to_jsonb(feature_flags)`, env, in.Key, in.Name, floorActor).Scan(&id, &revision, &created)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, floorInsertRevision, id, revision, created, floorActor); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, floorInsertFlagAudit, env, id.String(), in.Key+","+in.Name, "Create", nil, created, floorActor)
		return err
	})
	if err != nil {
		return floorError(c, err)
	}
	return floorJSON(c, created)
}

// changeFlag locks a flag, refuses a stale revision when one is given,
// applies update (which sets the new revision and returns the row as JSON),
// and records the revision and the audit entry, in one transaction.
func (f *floor) changeFlag(ctx context.Context, env, key string, from *uuid.UUID, update func(tx pgx.Tx, id uuid.UUID) (uuid.UUID, []byte, error)) (uuid.UUID, []byte, error) {
	var revision uuid.UUID
	var after []byte
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var id, current uuid.UUID
		var before []byte
		err := tx.QueryRow(ctx, `-- name: floor.LockFlag
			SELECT id, revision, to_jsonb(f) FROM feature_flags f
			WHERE env_id = $1 AND lower(key) = lower($2::text) AND key = $2::text FOR UPDATE`, env, key).Scan(&id, &current, &before)
		if err != nil {
			return err
		}
		if from != nil && *from != current {
			return errFloorConflict
		}
		if revision, after, err = update(tx, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, floorInsertRevision, id, revision, after, floorActor); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, floorInsertFlagAudit, env, id.String(), key, "Update", before, after, floorActor)
		return err
	})
	return revision, after, err
}

func (f *floor) flagDescription(c echo.Context) error {
	var in struct {
		Description string
		Revision    *uuid.UUID
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	ctx := c.Request().Context()
	revision, _, err := f.changeFlag(ctx, c.Param("env"), c.Param("key"), in.Revision, func(tx pgx.Tx, id uuid.UUID) (uuid.UUID, []byte, error) {
		var revision uuid.UUID
		var after []byte
		err := tx.QueryRow(ctx, `-- name: floor.UpdateFlagDescription
			UPDATE feature_flags SET description = $2, revision = gen_random_uuid(), updated_at = clock_timestamp()
			WHERE id = $1 RETURNING revision, to_jsonb(feature_flags)`, id, in.Description).Scan(&revision, &after)
		return revision, after, err
	})
	if err != nil {
		return floorError(c, err)
	}
	return c.JSON(http.StatusOK, revision)
}

// flagTargeting stores the targeting as sent (FeatBit's body) and answers the
// new revision; unlike Bunting it neither validates it nor keeps
// segment_refs, which Bunting's next write of the flag sets again.
func (f *floor) flagTargeting(c echo.Context) error {
	var in struct {
		Targeting struct {
			TargetUsers, Rules, Fallthrough json.RawMessage
		}
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	t := in.Targeting
	ctx := c.Request().Context()
	revision, _, err := f.changeFlag(ctx, c.Param("env"), c.Param("key"), nil, func(tx pgx.Tx, id uuid.UUID) (uuid.UUID, []byte, error) {
		var revision uuid.UUID
		var after []byte
		err := tx.QueryRow(ctx, `-- name: floor.UpdateFlagTargeting
			UPDATE feature_flags SET target_users = $2, rules = $3, fallthrough = $4, revision = gen_random_uuid(),
				updated_at = clock_timestamp()
			WHERE id = $1 RETURNING revision, to_jsonb(feature_flags)`, id, t.TargetUsers, t.Rules, t.Fallthrough).Scan(&revision, &after)
		return revision, after, err
	})
	if err != nil {
		return floorError(c, err)
	}
	return c.JSON(http.StatusOK, revision)
}

func (f *floor) segmentsByIDs(c echo.Context) error {
	var ids []uuid.UUID
	for _, s := range strings.Split(c.QueryParam("ids"), ",") {
		id, err := uuid.Parse(s)
		if err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
		ids = append(ids, id)
	}
	var body []byte
	err := f.pool.QueryRow(c.Request().Context(), `-- name: floor.SegmentsByIDs
		SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY created_at, id), '[]') FROM segments s
		WHERE organization_id = $1 AND env_id = $2 AND id = ANY($3::uuid[])`,
		c.Param("org"), c.Param("env"), ids).Scan(&body)
	if err != nil {
		return floorError(c, err)
	}
	return floorJSON(c, body)
}

// patchSegment applies the operations the benchmark sends (replace
// /description and /included) without a JSON Patch library: lock, update,
// audit, in one transaction.
func (f *floor) patchSegment(c echo.Context) error {
	var ops []struct {
		Op, Path string
		Value    json.RawMessage
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&ops); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	var description *string
	var included []string
	for _, op := range ops {
		var err error
		switch op.Path {
		case "/description":
			err = json.Unmarshal(op.Value, &description)
		case "/included":
			err = json.Unmarshal(op.Value, &included)
		}
		if err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
	}
	ctx := c.Request().Context()
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var before, after []byte
		var name string
		err := tx.QueryRow(ctx, `-- name: floor.LockSegment
			SELECT name, to_jsonb(s) FROM segments s WHERE organization_id = $1 AND id = $2 FOR UPDATE`,
			c.Param("org"), c.Param("id")).Scan(&name, &before)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `-- name: floor.UpdateSegment
			UPDATE segments SET description = coalesce($2, description), included = coalesce($3, included),
				updated_at = clock_timestamp()
			WHERE id = $1 RETURNING to_jsonb(segments)`, c.Param("id"), description, included).Scan(&after)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `-- name: floor.InsertAuditLog
			INSERT INTO audit_logs (workspace_id, organization_id, env_id, ref_type, ref_id, keyword, operation,
				previous, current, comment, creator_id, creator_kind)
			SELECT workspace_id, organization_id, env_id, 'Segment', id::text, $2::text, 'Update', $3::jsonb, $4::jsonb,
				'Updated via patch', $5::uuid, 'system'
			FROM segments WHERE id = $1`, c.Param("id"), name, before, after, floorActor)
		return err
	})
	if err != nil {
		return floorError(c, err)
	}
	return c.JSON(http.StatusOK, true)
}

// policyMembers answers a page of the members holding a policy whose email
// contains a text, with the number of matches counted in the same query.
func (f *floor) policyMembers(c echo.Context) error {
	rows, err := f.pool.Query(c.Request().Context(), `-- name: floor.SearchPolicyMembers
		SELECT count(*) OVER (), u.id, u.name, u.email
		FROM organization_users ou
		JOIN users u ON u.id = ou.user_id
		JOIN member_policies mp
		  ON mp.organization_id = ou.organization_id AND mp.user_id = ou.user_id AND mp.policy_id = $2
		WHERE ou.organization_id = $1 AND lower(u.email) LIKE '%' || lower($3::text) || '%'
		ORDER BY ou.created_at DESC, ou.user_id LIMIT 10`, c.Param("org"), c.Param("id"), c.QueryParam("SearchText"))
	if err != nil {
		return floorError(c, err)
	}
	type member struct {
		ID          uuid.UUID `json:"id"`
		Name        string    `json:"name"`
		Email       string    `json:"email"`
		IsPolicyMem bool      `json:"isPolicyMember"`
	}
	var total int64
	items := []member{}
	for rows.Next() {
		m := member{IsPolicyMem: true}
		if err := rows.Scan(&total, &m.ID, &m.Name, &m.Email); err != nil {
			return floorError(c, err)
		}
		items = append(items, m)
	}
	if err := rows.Err(); err != nil {
		return floorError(c, err)
	}
	return c.JSON(http.StatusOK, map[string]any{"totalCount": total, "items": items})
}

// login checks the password against the stored hash and signs a token; the
// bcrypt comparison is the essential cost of a sign-in, so the floor pays it.
func (f *floor) login(c echo.Context) error {
	var in struct{ Email, Password string }
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return c.NoContent(http.StatusBadRequest)
	}
	var id uuid.UUID
	var hash *string
	err := f.pool.QueryRow(c.Request().Context(), `-- name: floor.GetUserByEmail
		SELECT id, password_hash FROM users WHERE lower(email) = lower($1::text)`, in.Email).Scan(&id, &hash)
	if err != nil {
		return floorError(c, err)
	}
	if hash == nil || bcrypt.CompareHashAndPassword([]byte(*hash), []byte(in.Password)) != nil {
		return c.NoContent(http.StatusUnauthorized)
	}
	mac := hmac.New(sha256.New, f.key)
	mac.Write(id[:])
	return c.JSON(http.StatusOK, map[string]string{"token": base64.RawURLEncoding.EncodeToString(mac.Sum(id[:]))})
}

// compare answers a page of the environment's flags by key, each with the
// other environment's flag of the same key (or null), and how many flags
// there are: what comparing a page needs to read, in one query, leaving the
// comparison itself out.
func (f *floor) compare(c echo.Context) error {
	page, err := strconv.Atoi(c.QueryParam("page"))
	if err != nil || page < 0 {
		return c.NoContent(http.StatusBadRequest)
	}
	var body []byte
	err = f.pool.QueryRow(c.Request().Context(), `-- name: floor.CompareFlags
		SELECT jsonb_build_object(
			'totalCount', (SELECT count(*) FROM feature_flags WHERE env_id = $1 AND NOT is_archived),
			'items', coalesce(jsonb_agg(jsonb_build_object('source', to_jsonb(s), 'target', to_jsonb(t)) ORDER BY s.key), '[]'))
		FROM (SELECT * FROM feature_flags WHERE env_id = $1 AND NOT is_archived ORDER BY key LIMIT $3 OFFSET $4) s
		LEFT JOIN feature_flags t ON t.env_id = $2 AND lower(t.key) = lower(s.key) AND t.key = s.key`,
		c.Param("env"), c.Param("target"), comparePage, page*comparePage).Scan(&body)
	if err != nil {
		return floorError(c, err)
	}
	return floorJSON(c, body)
}
