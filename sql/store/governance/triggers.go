package governance

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Trigger types and actions, by FeatBit's names (Domain/Triggers).
const (
	TriggerTypeFlagGeneral = "feature-flag-general"
	TriggerTurnOn          = "turn-on"
	TriggerTurnOff         = "turn-off"
)

// Trigger bounds. How often a trigger may run, and how many unknown tokens
// one address may try, are the API's limits (web/limit).
const (
	MaxFlagTrigger = 50
	// triggerTokenLen is FeatBit's token length; Bunting's tokens are 30
	// random bytes in URL-safe base64, which is also 40 characters.
	triggerTokenLen = 40
	// triggerPreviewLen is how much of a token lists show, as FeatBit does.
	triggerPreviewLen = 5
)

// Trigger is a secret URL that turns a flag on or off: FeatBit's Trigger.
// Token is the whole token only in the answer to a creation; elsewhere it is
// its first five characters and asterisks, as FeatBit's list shows it.
type Trigger struct {
	ID              uuid.UUID  `json:"id"`
	TargetID        uuid.UUID  `json:"targetId"`
	Type            string     `json:"type"`
	Action          string     `json:"action"`
	Token           string     `json:"token"`
	Description     string     `json:"description"`
	IsEnabled       bool       `json:"isEnabled"`
	TriggeredTimes  int        `json:"triggeredTimes"`
	LastTriggeredAt *time.Time `json:"lastTriggeredAt"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
}

// TriggerInput creates a trigger: FeatBit's CreateTrigger.
type TriggerInput struct {
	TargetID    uuid.UUID `json:"targetId"`
	Type        string    `json:"type"`
	Action      string    `json:"action"`
	Description string    `json:"description"`
}

// TriggerStatusInput enables or disables a trigger: FeatBit's UpdateTrigger.
type TriggerStatusInput struct {
	IsEnabled *bool `json:"isEnabled"`
}

// ErrTriggerLimit refuses a flag's trigger past MaxFlagTrigger.
var ErrTriggerLimit = &core.RuleError{Code: "TooManyTriggers"}

func triggerFrom(r db.FlagTrigger) Trigger {
	return Trigger{ID: r.ID, TargetID: r.FlagID, Type: r.Type, Action: r.Action,
		Token:       r.TokenPreview + strings.Repeat("*", triggerTokenLen-triggerPreviewLen),
		Description: r.Description, IsEnabled: r.IsEnabled, TriggeredTimes: int(r.TriggeredTimes),
		LastTriggeredAt: core.UTCPtr(r.LastTriggeredAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// newTriggerToken returns a fresh token and the hash that is stored of it.
func newTriggerToken() (string, []byte) {
	random := make([]byte, 30)
	rand.Read(random)
	token := base64.RawURLEncoding.EncodeToString(random)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:]
}

// triggerTarget loads the flag a trigger is for, in the caller's organization.
func (s *Governance) triggerTarget(ctx context.Context, a *core.Actor, flagID uuid.UUID) (db.GetTriggerTargetRow, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.GetTriggerTargetRow{}, err
	}
	row, err := s.core.Q.GetTriggerTarget(ctx, db.GetTriggerTargetParams{OrganizationID: orgID, ID: flagID})
	return row, core.Translate(err)
}

// mayManageTriggers checks that a person may make, change or remove the
// triggers of a flag: a trigger turns the flag on or off, so it needs what
// turning it on or off needs.
func mayManageTriggers(a *core.Actor, projectKey, envKey, flagKey string, tags []string) error {
	return a.Require(access.ToggleFlag, flagstore.FlagRN(projectKey, envKey, flagKey, tags))
}

// ListTriggers returns a flag's triggers, newest first, to anyone who may read its environment.
func (s *Governance) ListTriggers(ctx context.Context, a *core.Actor, flagID uuid.UUID) ([]Trigger, error) {
	f, err := s.triggerTarget(ctx, a, flagID)
	if err != nil {
		return nil, err
	}
	if err := a.Require(access.CanAccessEnv, core.EnvRN(f.ProjectKey, f.EnvKey)); err != nil {
		return nil, err
	}
	rows, err := s.core.Q.ListFlagTriggers(ctx, db.ListFlagTriggersParams{FlagID: flagID, Limit: MaxFlagTrigger})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]Trigger, len(rows))
	for i, r := range rows {
		out[i] = triggerFrom(r)
	}
	return out, nil
}

// CreateTrigger adds a trigger to a flag and returns it with its whole
// token, shown this once.
func (s *Governance) CreateTrigger(ctx context.Context, a *core.Actor, in TriggerInput) (Trigger, error) {
	var v core.Validator
	if in.TargetID == uuid.Nil {
		v.Add("targetId", "required")
	}
	v.OneOf("type", in.Type, TriggerTypeFlagGeneral)
	v.OneOf("action", in.Action, TriggerTurnOn, TriggerTurnOff)
	v.Text("description", in.Description, core.MaxDescriptionLen)
	if err := v.Err(); err != nil {
		return Trigger{}, err
	}
	f, err := s.triggerTarget(ctx, a, in.TargetID)
	if err != nil {
		return Trigger{}, err
	}
	if err := mayManageTriggers(a, f.ProjectKey, f.EnvKey, f.FeatureFlag.Key, f.FeatureFlag.Tags); err != nil {
		return Trigger{}, err
	}
	token, hash := newTriggerToken()
	var out Trigger
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		// Lock the flag so two creations cannot both pass the count.
		if _, err := q.LockFlag(ctx, db.LockFlagParams{EnvID: f.FeatureFlag.EnvID, Key: f.FeatureFlag.Key}); err != nil {
			return err
		}
		n, err := q.CountFlagTriggers(ctx, in.TargetID)
		if err != nil {
			return err
		}
		if n >= MaxFlagTrigger {
			return ErrTriggerLimit
		}
		row, err := q.CreateTrigger(ctx, db.CreateTriggerParams{ID: uuid.New(), FlagID: in.TargetID, Type: in.Type,
			Action: in.Action, Description: strings.TrimSpace(in.Description), TokenHash: hash,
			TokenPreview: token[:triggerPreviewLen], CreatorID: core.ActorID(a)})
		if err != nil {
			return err
		}
		out = triggerFrom(row)
		return s.auditTrigger(ctx, q, a, f.FeatureFlag.EnvID, f.FeatureFlag.Key, core.OpCreate, nil, &out)
	})
	if err != nil {
		return Trigger{}, err
	}
	out.Token = token
	return out, nil
}

// auditTrigger records a change to a trigger in its flag's environment history.
func (s *Governance) auditTrigger(ctx context.Context, q *db.Queries, a *core.Actor, envID uuid.UUID, flagKey, op string, before, after *Trigger) error {
	ch := core.Change{RefType: "FlagTrigger", Operation: op, EnvID: &envID}
	if before != nil {
		ch.Previous, ch.RefID, ch.Keyword = before, before.ID.String(), flagKey+","+before.Description
	}
	if after != nil {
		ch.Current, ch.RefID, ch.Keyword = after, after.ID.String(), flagKey+","+after.Description
	}
	return s.core.Audit(ctx, q, a, ch)
}

// managedTrigger loads a trigger of the caller's organization and checks
// that the caller may manage it.
func (s *Governance) managedTrigger(ctx context.Context, a *core.Actor, id uuid.UUID) (db.GetTriggerInOrganizationRow, error) {
	orgID, err := a.Org()
	if err != nil {
		return db.GetTriggerInOrganizationRow{}, err
	}
	row, err := s.core.Q.GetTriggerInOrganization(ctx, db.GetTriggerInOrganizationParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return row, core.Translate(err)
	}
	return row, mayManageTriggers(a, row.ProjectKey, row.EnvKey, row.FlagKey, row.FlagTags)
}

// ResetTriggerToken gives a trigger a new token and returns the trigger with
// it, shown this once; the old URL stops working at once.
func (s *Governance) ResetTriggerToken(ctx context.Context, a *core.Actor, id uuid.UUID) (Trigger, error) {
	t, err := s.managedTrigger(ctx, a, id)
	if err != nil {
		return Trigger{}, err
	}
	token, hash := newTriggerToken()
	var out Trigger
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.ResetTriggerToken(ctx, db.ResetTriggerTokenParams{ID: id, TokenHash: hash, TokenPreview: token[:triggerPreviewLen]})
		if err != nil {
			return err
		}
		before := triggerFrom(t.FlagTrigger)
		out = triggerFrom(row)
		return s.auditTrigger(ctx, q, a, t.EnvID, t.FlagKey, core.OpUpdate, &before, &out)
	})
	if err != nil {
		return Trigger{}, err
	}
	out.Token = token
	return out, nil
}

// SetTriggerStatus enables or disables a trigger; a disabled trigger's URL
// answers as an unknown one does.
func (s *Governance) SetTriggerStatus(ctx context.Context, a *core.Actor, id uuid.UUID, in TriggerStatusInput) (Trigger, error) {
	if in.IsEnabled == nil {
		return Trigger{}, core.Invalid("isEnabled_is_required")
	}
	t, err := s.managedTrigger(ctx, a, id)
	if err != nil {
		return Trigger{}, err
	}
	var out Trigger
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.SetTriggerEnabled(ctx, db.SetTriggerEnabledParams{ID: id, IsEnabled: *in.IsEnabled})
		if err != nil {
			return err
		}
		before := triggerFrom(t.FlagTrigger)
		out = triggerFrom(row)
		return s.auditTrigger(ctx, q, a, t.EnvID, t.FlagKey, core.OpUpdate, &before, &out)
	})
	return out, err
}

// DeleteTrigger removes a trigger.
func (s *Governance) DeleteTrigger(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	t, err := s.managedTrigger(ctx, a, id)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteTrigger(ctx, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return core.ErrNotFound
		}
		before := triggerFrom(t.FlagTrigger)
		return s.auditTrigger(ctx, q, a, t.EnvID, t.FlagKey, core.OpRemove, &before, nil)
	})
}

// TriggerRun is what calling a trigger did.
type TriggerRun struct {
	Trigger Trigger
	Flag    flagstore.Flag
}

// RunTrigger does what the trigger whose token is given says: turns its flag
// on or off, through the same locked path as every change (revision,
// history naming the trigger, push to SDKs). The token is the credential:
// an unknown token and a disabled trigger are both ErrNotFound (a miss), so
// a caller learns nothing about which. Once the trigger is found, admit
// decides whether it may run now (the caller's rate limit; nil admits every
// call): refused, it is ErrTooManyRequests. On an archived flag it is
// ErrFlagIsArchived. Every accepted call is counted on the trigger, whether
// or not the flag changed.
//
// The token is looked up before anything is refused, so a valid token
// answers to its own trigger's limit only; the caller counts misses per
// address after the fact. Guessing stays hopeless (240 random bits), and
// the lookup is one indexed read of a hash.
func (s *Governance) RunTrigger(ctx context.Context, token string, admit func(triggerID uuid.UUID) bool) (TriggerRun, error) {
	if len(token) != triggerTokenLen {
		return TriggerRun{}, core.ErrNotFound
	}
	sum := sha256.Sum256([]byte(token))
	row, err := s.core.Q.GetTriggerByToken(ctx, sum[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return TriggerRun{}, core.ErrNotFound
	}
	if err != nil {
		return TriggerRun{}, core.Translate(err)
	}
	t := row.FlagTrigger
	if !t.IsEnabled {
		return TriggerRun{}, core.ErrNotFound
	}
	if admit != nil && !admit(t.ID) {
		return TriggerRun{}, core.ErrTooManyRequests
	}
	if err := s.triggerCreatorMay(ctx, row); err != nil {
		return TriggerRun{}, err
	}
	// The trigger acts as itself with one right, toggling its own flag: the
	// token was its credential.
	a := &core.Actor{WorkspaceID: row.WorkspaceID, OrgID: row.OrganizationID, TriggerID: t.ID,
		Granted: []access.Statement{{ResourceType: access.TypeFlag, Effect: "allow",
			Actions:   []string{string(access.ToggleFlag)},
			Resources: []string{flagstore.FlagRN(row.ProjectKey, row.EnvKey, row.FlagKey, nil)}}}}
	env, err := s.core.EnvironmentOf(ctx, a, row.EnvID)
	if err != nil {
		return TriggerRun{}, err
	}
	var run TriggerRun
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		f, err := s.flags.ChangeFlagIn(ctx, q, a, env, row.FlagKey, flagstore.Change{Comment: triggerComment(t)}, access.ToggleFlag, "", func(f *flagstore.Flag) error {
			f.IsEnabled = t.Action == TriggerTurnOn
			return nil
		})
		if err != nil {
			return err
		}
		// Counted with the change, and only while the trigger is as it was
		// read: one disabled, reset or deleted meanwhile changes nothing.
		marked, err := q.MarkTriggerRun(ctx, db.MarkTriggerRunParams{ID: t.ID, TokenHash: sum[:]})
		run = TriggerRun{Trigger: triggerFrom(marked), Flag: f}
		return err
	})
	if errors.Is(err, core.ErrNotFound) {
		return TriggerRun{}, core.ErrNotFound // disabled, reset or deleted meanwhile: a miss
	}
	return run, err
}

// triggerCreatorMay checks that whoever made a trigger may still turn its
// flag on or off (ToggleFlag on the flag, tags included): the trigger acts
// for them, so it stops as their access tokens do when they leave the
// organization or lose the right. The creator is a member, or the access
// token that made the trigger, which must itself still act.
func (s *Governance) triggerCreatorMay(ctx context.Context, row db.GetTriggerByTokenRow) error {
	creator := row.FlagTrigger.CreatorID
	var sts []access.Statement
	tok, err := s.core.Q.GetAccessToken(ctx, db.GetAccessTokenParams{OrganizationID: row.OrganizationID, ID: creator})
	switch {
	case err == nil:
		sts, err = s.core.TokenStatements(ctx, tok.AccessToken)
	case errors.Is(err, pgx.ErrNoRows):
		sts, err = s.core.MemberStatements(ctx, s.core.Q, row.OrganizationID, creator) // none once they left
	}
	if errors.Is(err, core.ErrUnauthenticated) {
		return core.ErrTriggerCreatorNotAllowed
	}
	if err != nil {
		return core.Translate(err)
	}
	if !access.Allows(sts, access.ToggleFlag, flagstore.FlagRN(row.ProjectKey, row.EnvKey, row.FlagKey, row.FlagTags)) {
		return core.ErrTriggerCreatorNotAllowed
	}
	return nil
}

// triggerComment is the history comment of a trigger's change, naming it.
func triggerComment(t db.FlagTrigger) string {
	verb := "off"
	if t.Action == TriggerTurnOn {
		verb = "on"
	}
	name := t.Description
	if utf8.RuneCountInString(name) > 100 {
		name = string([]rune(name)[:100]) + "…"
	}
	if name == "" {
		name = t.TokenPreview + "…"
	}
	return fmt.Sprintf("Turned %s by trigger “%s”", verb, name)
}

// TriggerName names a trigger as the operator of its changes, as the
// history (ListEnvAuditLogs) and flag lists (FlagListItems) do.
func TriggerName(t db.FlagTrigger) string {
	if t.Description == "" {
		return "Trigger " + t.TokenPreview + "…"
	}
	return "Trigger “" + t.Description + "”"
}
