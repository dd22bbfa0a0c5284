package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/experiments"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/web/httpx"
	"github.com/bunting-flags/bunting/web/metrics"
)

// authenticated resolves the request's secret, setting Retry-After when
// the answer is "too many requests". A secret this instance knows counts
// against its own limit only; anything else also against the address.
func (s *Server) authenticated(c echo.Context) (sdkdata.SDKEnv, error) {
	secret := credential(c.Request())
	if _, known := s.cache.knownSecret(secret); !known {
		if addr := c.RealIP(); !s.limits.address.Allow(addr) {
			s.refuse(c, "requests per address", addr)
			return sdkdata.SDKEnv{}, core.ErrTooManyRequests
		}
	}
	return s.secretEnv(c, secret)
}

// insight is one element of an SDK's event report: an evaluation or a
// custom metric, for a user.
type insight struct {
	User       *insightUser `json:"user"`
	Variations []struct {
		FeatureFlagKey string `json:"featureFlagKey"`
		Variation      *struct {
			ID string `json:"id"`
		} `json:"variation"`
		// SendToExperiment marks an exposure: the evaluation counts in the
		// flag's experiments.
		SendToExperiment bool `json:"sendToExperiment"`
	} `json:"variations"`
	// Metrics are the user's metric events (track()): conversions and
	// numeric values of the experiments measuring them.
	Metrics []struct {
		Type         string   `json:"type"`
		EventName    string   `json:"eventName"`
		NumericValue *float64 `json:"numericValue"`
	} `json:"metrics"`
}

// insightUser is an event's user. Only the key decides whether the event
// counts: a name or properties of an unexpected shape leave the user out of
// the end users, never the evaluations out of the counts.
type insightUser struct {
	KeyID                string          `json:"keyId"`
	Name                 json.RawMessage `json:"name"`
	CustomizedProperties json.RawMessage `json:"customizedProperties"`
}

func (iu *insightUser) endUser() (eval.EndUser, bool) {
	cu := clientUser{KeyID: iu.KeyID}
	if len(iu.Name) > 0 && json.Unmarshal(iu.Name, &cu.Name) != nil {
		return eval.EndUser{}, false
	}
	if len(iu.CustomizedProperties) > 0 && json.Unmarshal(iu.CustomizedProperties, &cu.CustomizedProperties) != nil {
		return eval.EndUser{}, false
	}
	return cu.endUser()
}

// track receives the evaluation and metric events SDKs report, answering
// 200 with no body as FeatBit does. Evaluations are counted per flag and
// variation; events without a user key are dropped, as FeatBit drops them,
// and so are variations without a variation. Evaluations sent to
// experiments and metric events go to the experiments recording in the
// environment, in two statements for the whole report (bounded per secret:
// admitExperimentEvents). They are timed when they arrive, not by the SDK's
// clock, so a client's clock cannot move them into or out of an
// iteration's window. The events' users are handed to the store's end-user
// buffer, which writes them later in batches: the answer never waits for
// them.
func (s *Server) track(c echo.Context) error {
	env, err := s.authenticated(c)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(c, maxInsightBody)
	if err != nil {
		return err
	}
	if s.forwardInsight != nil {
		return s.forwardInsight(c, env, credential(c.Request()), body)
	}
	var report []insight
	switch err := jsonbody.Decode(body, &report); {
	case errors.Is(err, jsonbody.ErrTooCostly):
		return echo.ErrStatusRequestEntityTooLarge
	case err != nil:
		return core.Invalid("body_is_invalid")
	}
	var counts []sdkdata.EvaluationCount
	var expt experiments.Events
	now := s.now()
	users := make([]eval.EndUser, 0, len(report))
	for _, in := range report {
		if in.User == nil || strings.TrimSpace(in.User.KeyID) == "" {
			continue
		}
		if u, ok := in.User.endUser(); ok {
			users = append(users, u)
		}
		for _, v := range in.Variations {
			if v.Variation == nil {
				continue
			}
			counts = append(counts, sdkdata.EvaluationCount{FlagKey: v.FeatureFlagKey, VariationID: v.Variation.ID, Count: 1})
			if v.SendToExperiment {
				expt.Exposures = append(expt.Exposures, experiments.Exposure{FlagKey: v.FeatureFlagKey, UserKey: in.User.KeyID,
					VariationID: v.Variation.ID, At: now})
			}
		}
		for _, m := range in.Metrics {
			// The SDKs send 1 when track() is given no value.
			value := 1.0
			if m.NumericValue != nil {
				value = *m.NumericValue
			}
			if t := experiments.EventTypeOf(m.Type); t != 0 && m.EventName != "" {
				expt.Conversions = append(expt.Conversions, experiments.Conversion{EventName: m.EventName, EventType: t,
					UserKey: in.User.KeyID, Value: value, At: now})
			}
		}
	}
	counts = s.admitEvaluations(env.SecretID, counts)
	if err := s.src.RecordEvaluations(c.Request().Context(), env, counts, now); err != nil {
		return err
	}
	expt = s.admitExperimentEvents(env.SecretID, expt)
	if err := s.store.Experiments().RecordEvents(c.Request().Context(), env.EnvID, expt); err != nil {
		return err
	}
	s.sawEndUsers(env, users, now)
	s.metrics.Evaluated(metrics.Insight, metrics.Served, len(counts))
	return c.NoContent(http.StatusOK)
}

// serverLatest is the polling form of a server SDK's data-sync:
// GET …/sdk/server/latest-all?timestamp=N answers the data-sync message, or
// 200 with no body when nothing changed.
func (s *Server) serverLatest(c echo.Context) error {
	env, err := s.authenticated(c)
	if err != nil {
		return err
	}
	if env.SecretType != core.SecretServer {
		return core.ErrForbidden
	}
	ts, err := queryTimestamp(c)
	if err != nil {
		return err
	}
	snap, err := s.cache.get(c.Request().Context(), env)
	if err != nil {
		return err
	}
	if eventType(ts) == eventFull {
		return writeTagged(c, snap.serverFull().bytes)
	}
	p := serverData(snap, eventType(ts), ts)
	if p.EventType == eventPatch && len(p.FeatureFlags)+len(p.Segments) == 0 {
		return c.NoContent(http.StatusOK)
	}
	return writeTagged(c, encode("data-sync", p))
}

// clientLatest is the polling form of a client SDK's data-sync: POST
// …/sdk/client/latest-all?timestamp=N with the user as the body.
func (s *Server) clientLatest(c echo.Context) error {
	env, err := s.authenticated(c)
	if err != nil {
		return err
	}
	ts, err := queryTimestamp(c)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(c, maxPollingBody)
	if err != nil {
		return err
	}
	var cu clientUser
	if jsonbody.Decode(body, &cu) != nil {
		return core.Invalid("user_is_invalid")
	}
	u, ok := cu.endUser()
	if !ok {
		return core.Invalid("user_is_invalid")
	}
	s.sawEndUsers(env, []eval.EndUser{u}, s.now())
	snap, err := s.cache.get(c.Request().Context(), env)
	if err != nil {
		return err
	}
	p := clientData(snap, eventType(ts), ts, u)
	if p.EventType == eventPatch && len(p.FeatureFlags) == 0 {
		return c.NoContent(http.StatusOK)
	}
	return writeTagged(c, encode("data-sync", p))
}

func eventType(ts int64) string {
	if ts == 0 {
		return eventFull
	}
	return eventPatch
}

func queryTimestamp(c echo.Context) (int64, error) {
	s := c.QueryParam("timestamp")
	if s == "" {
		return 0, nil
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, core.Invalid("timestamp_is_invalid")
	}
	return ts, nil
}

// writeTagged answers a JSON body with its ETag, or 304 when the client
// already has it.
func writeTagged(c echo.Context, body []byte) error {
	sum := sha256.Sum256(body)
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	c.Response().Header().Set("ETag", tag)
	if matchesETag(c.Request().Header.Get("If-None-Match"), tag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

// matchesETag reports whether an If-None-Match header names tag (weakly).
func matchesETag(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}
