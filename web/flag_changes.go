package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/views"
)

// The forms of a flag's page: each decodes its form, makes its change with
// the store, and shows the tab again (flagPage).

// flagChange is the part every flag change shares: do makes the change and
// returns the flag it left (nil when it made none, as a change request);
// the tab is shown again, with message, or with the form made by form, its
// fields' problems and the change request's.
func (p *pages) flagChange(c echo.Context, tab, message string, do func(w workEnv, key string) (*flagstore.Flag, error),
	form func(f *views.Form) flagState, fields ...string) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	changed, err := do(w, c.Param("key"))
	return p.flagChanged(c, tab, message, changed, err, form, fields...)
}

// flagChanged ends a flag change that left the flag changed and err, as
// flagChange says.
func (p *pages) flagChanged(c echo.Context, tab, message string, changed *flagstore.Flag, err error,
	form func(f *views.Form) flagState, fields ...string) error {
	if c.Get(requestedKey) != nil {
		message = requestedMessage
		if err == nil && tab == tabTargeting {
			focusOn(c, pendingHeading) // where the request now waits
		}
	}
	failure := err
	// A change made at once on the targeting tab redraws only what it
	// changed; a change requested adds to the pending changes, and a
	// refused one shows its form again, so those redraw the tab.
	st := flagState{flag: changed, served: err == nil && changed != nil && c.Get(requestedKey) == nil && isHTMX(c) && tab == tabTargeting}
	return p.subjectChange(c, tabHref(flagHref(c.Param("key")), tab), message, err, func(f *views.Form) { st = form(f) },
		func(status int, posted *views.Form) error {
			if posted != nil && tab == tabVariations && stillServed(failure) {
				posted.Error = "A variation you removed is still served by the targeting or as the off variation. Change those first, then remove it."
			}
			st.status = status
			return p.flagPage(c, tab, st)
		}, append(fields, "reason", "reviewers")...)
}

// changeServing makes a change to what a flag serves, with the posted
// reason and reviewers: the store makes it at once, or, where the
// environment's changes need approval, as a change request of them
// (ChangeServing). The flag is nil when a change was requested.
func (p *pages) changeServing(c echo.Context, w workEnv, key string, in flagstore.ServingChange) (*flagstore.Flag, error) {
	reviewers, err := formIDs(c, "reviewers")
	if err != nil {
		return nil, err
	}
	in.Proposal = &flagstore.Proposal{Reason: c.FormValue("reason"), Reviewers: reviewers}
	out, err := p.store.Flags().ChangeServing(c.Request().Context(), actor(c), w.id, key, in)
	if err != nil {
		return nil, err
	}
	if out.Request != nil {
		c.Set(requestedKey, true)
		return nil, nil
	}
	return &out.Changed, nil
}

// changed is the flag a change left, for flagChange.
func changed(f flagstore.Flag, err error) (*flagstore.Flag, error) {
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// setFlagOffVariation chooses what the flag serves when off.
func (p *pages) setFlagOffVariation(c echo.Context) error {
	in, err := postedInput[offVariationForm](c)
	if err != nil {
		return err
	}
	return p.flagChange(c, tabTargeting, "Off variation saved.", func(w workEnv, key string) (*flagstore.Flag, error) {
		saved, err := p.changeServing(c, w, key, flagstore.ServingChange{OffVariationID: &in.OffVariationID, Change: in.Change})
		if err == nil {
			focusOn(c, summaryFocus(views.EditOff, saved))
		}
		return saved, err
	}, func(f *views.Form) flagState {
		f.ID, f.Action = "off-variation", flagHref(c.Param("key"))+"/off-variation"
		f.Values = postedValues(in.Change, map[string]string{"disabledVariationId": in.OffVariationID})
		return flagState{off: f}
	}, "disabledVariationId")
}

// setFlagTargeting saves the targeting editor, or applies one of its edit
// buttons and shows it again unsaved.
func (p *pages) setFlagTargeting(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	ch, params, err := postedEditor[changeForm](c)
	if err != nil {
		return err
	}
	key := c.Param("key")
	formState := func() *views.Form {
		form := p.form(c, "targeting", flagHref(key)+"/targeting", postedValues(ch, map[string]string{
			"title": c.FormValue("title"), "scheduledTime": c.FormValue("scheduledTime")}))
		return &form
	}
	if c.FormValue("edit") != "" || c.FormValue("schedule") != "" {
		return p.targetingAgainstFlag(c, w, ch, params, formState)
	}
	// Saved now: the form is read against the flag in the change
	// pipeline's draft stage, under its lock, so the page reads it no
	// earlier.
	var (
		tf      targetingForm
		drafted flagstore.Flag
	)
	saved, err := p.changeServing(c, w, key, flagstore.ServingChange{Change: ch, DraftTargeting: func(f flagstore.Flag) (flagstore.FlagTargeting, error) {
		tf, drafted = parseTargeting(params, f.Variations), f
		in, ok := tf.input(f)
		if !ok {
			return flagstore.FlagTargeting{}, errUnsavedRollouts
		}
		return *in.Targeting, nil
	}})
	switch {
	case errors.Is(err, errUnsavedRollouts):
		form := formState()
		form.Error = "Some rollouts cannot be saved; see below."
		return p.flagPage(c, tabTargeting, flagState{status: http.StatusBadRequest, flag: &drafted, targeting: &tf, targetingForm: form})
	case err != nil && drafted.ID == uuid.Nil:
		// Refused before the form was read (a lost race): it is shown again
		// read against the flag as it is now.
		f, gerr := p.store.Flags().GetFlag(c.Request().Context(), actor(c), w.id, key)
		if gerr != nil {
			return gerr
		}
		tf = parseTargeting(params, f.Variations)
	case err == nil:
		focusOn(c, summaryFocus(c.FormValue("part"), saved))
	}
	return p.flagChanged(c, tabTargeting, "Targeting saved.", saved, err, func(form *views.Form) flagState {
		*form = *formState()
		return flagState{targeting: &tf, targetingForm: form}
	}, "targetUsers", "rules", "fallthrough")
}

// errUnsavedRollouts is a targeting form whose rollouts cannot be saved
// (shares that are not numbers, or do not add up): the editor says so.
var errUnsavedRollouts = errors.New("unsaved rollouts")

// targetingAgainstFlag applies one of the targeting editor's edit buttons
// and shows it again unsaved, or schedules its change: both read the form
// against the flag as it is now.
func (p *pages) targetingAgainstFlag(c echo.Context, w workEnv, ch flagstore.Change, params url.Values, formState func() *views.Form) error {
	f, err := p.store.Flags().GetFlag(c.Request().Context(), actor(c), w.id, c.Param("key"))
	if err != nil {
		return err
	}
	tf := parseTargeting(params, f.Variations)
	if edit := c.FormValue("edit"); edit != "" {
		var focus, message string
		tf.rules, focus, message = editRules("targeting", tf.rules, edit, f.Variations)
		focusOn(c, focus)
		announce(c, message)
		return p.flagPage(c, tabTargeting, flagState{flag: &f, targeting: &tf, targetingForm: formState()})
	}
	in, ok := tf.input(f)
	in.Change = ch
	if !ok {
		form := formState()
		form.Error = "Some rollouts cannot be saved; see below."
		return p.flagPage(c, tabTargeting, flagState{status: http.StatusBadRequest, flag: &f, targeting: &tf, targetingForm: form})
	}
	return p.scheduleTargeting(c, in, func(form *views.Form) flagState {
		*form = *formState()
		return flagState{targeting: &tf, targetingForm: form}
	})
}

// scheduleTargeting schedules the targeting editor's change for the time
// it names; where changes need approval the schedule waits for a change
// request of the posted reason and reviewers (the store decides).
func (p *pages) scheduleTargeting(c echo.Context, in flagstore.TargetingInput, shown func(form *views.Form) flagState) error {
	at := formTime(c.FormValue("scheduledTime"))
	message := "Targeting change scheduled."
	if at != nil {
		message = "Targeting change scheduled for " + when(*at) + "."
	}
	sin := governance.ScheduleInput{DraftInput: flagstore.DraftInput{Targeting: in.Targeting, Change: in.Change},
		Title: c.FormValue("title"), ScheduledTime: at, Reason: c.FormValue("reason")}
	return p.flagChange(c, tabTargeting, message, func(w workEnv, key string) (*flagstore.Flag, error) {
		reviewers, err := formIDs(c, "reviewers")
		if err != nil {
			return nil, err
		}
		sin.Reviewers = reviewers
		_, err = p.store.Governance().ScheduleFlagChange(c.Request().Context(), actor(c), w.id, key, sin)
		if err == nil {
			focusOn(c, pendingHeading) // where the change now waits
		}
		return nil, err
	}, shown, "targetUsers", "rules", "fallthrough", "title", "scheduledTime")
}

// formTime reads a datetime-local field as UTC ("2006-01-02T15:04", seconds
// optional); nil when empty or not a time, which the store calls missing.
func formTime(s string) *time.Time {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), time.UTC); err == nil {
			return &t
		}
	}
	return nil
}

// setFlagVariations saves the variations editor, or applies one of its edit
// buttons and shows it again unsaved.
func (p *pages) setFlagVariations(c echo.Context) error {
	var posted variationsForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	params, err := c.FormParams()
	if err != nil {
		return err
	}
	vars := parseVariations(params)
	in := flagstore.VariationsInput{VariationType: posted.VariationType, Change: posted.Change.input()}
	key := c.Param("key")
	state := func(f *views.Form) flagState {
		f.ID, f.Action = "variations", flagHref(key)+"/variations"
		f.Values = postedValues(in.Change, map[string]string{})
		return flagState{variationsForm: f, variations: vars, variationType: in.VariationType}
	}
	if edit := c.FormValue("edit"); edit != "" {
		vars = editVariations(vars, edit)
		f := p.form(c, "", "", nil)
		return p.flagPage(c, tabVariations, state(&f))
	}
	in.Variations = storeVariations(vars)
	return p.flagChange(c, tabVariations, "Variations saved.", func(w workEnv, key string) (*flagstore.Flag, error) {
		return p.changeServing(c, w, key, flagstore.ServingChange{VariationType: in.VariationType, Variations: in.Variations, Change: in.Change})
	}, state, "variationType", "variations")
}

// stillServed tells that a variations change left targeting or the off
// variation naming a variation that is gone: the store reports those fields.
func stillServed(err error) bool {
	var verr *core.ValidationError
	if !errors.As(err, &verr) {
		return false
	}
	return slices.ContainsFunc(verr.Codes, func(code string) bool {
		return slices.Contains([]string{"targetUsers_is_invalid", "rules_is_invalid", "fallthrough_is_invalid", "disabledVariationId_is_invalid"}, code)
	})
}

// changeFlagText changes text t of a flag with change, given the text as
// typed.
func (p *pages) changeFlagText(c echo.Context, t textField,
	change func(ctx context.Context, a *core.Actor, envID uuid.UUID, key, text string, ch flagstore.Change) (*flagstore.Flag, error)) error {
	text, ch, err := postedText(c, t)
	if err != nil {
		return err
	}
	return p.flagChange(c, tabSettings, t.saved, func(w workEnv, key string) (*flagstore.Flag, error) {
		return change(c.Request().Context(), actor(c), w.id, key, text, ch)
	}, func(f *views.Form) flagState {
		var st flagState
		st.texts.again(t, f, "flag", flagHref(c.Param("key")), text, ch)
		return st
	}, t.name)
}

// renameFlag changes a flag's name.
func (p *pages) renameFlag(c echo.Context) error {
	return p.changeFlagText(c, textName, func(ctx context.Context, a *core.Actor, envID uuid.UUID, key, text string, ch flagstore.Change) (*flagstore.Flag, error) {
		return changed(p.store.Flags().RenameFlag(ctx, a, envID, key, flagstore.FlagNameInput{Name: text, Change: ch}))
	})
}

// describeFlag changes a flag's description.
func (p *pages) describeFlag(c echo.Context) error {
	return p.changeFlagText(c, textDescription, func(ctx context.Context, a *core.Actor, envID uuid.UUID, key, text string, ch flagstore.Change) (*flagstore.Flag, error) {
		_, err := p.store.Flags().UpdateFlagDescription(ctx, a, envID, key, flagstore.DescriptionInput{Description: &text, Change: ch})
		return nil, err
	})
}

// tagFlag replaces a flag's tags, typed separated by commas.
func (p *pages) tagFlag(c echo.Context) error {
	return p.changeFlagText(c, textTags, func(ctx context.Context, a *core.Actor, envID uuid.UUID, key, text string, ch flagstore.Change) (*flagstore.Flag, error) {
		tags := tagList(text)
		return changed(p.store.Flags().SetFlagTags(ctx, a, envID, key, flagstore.TagsInput{Tags: &tags, Change: ch}))
	})
}

// cloneFlag copies a flag under a new name and key and opens the copy; the
// copy keeps the description and tags.
func (p *pages) cloneFlag(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	var posted cloneForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := flagstore.CloneFlagInput{Name: posted.Name, Key: posted.Key, Change: posted.Change.input()}
	if in.NewFlagRequest, err = newFlagRequest(c); err != nil {
		return err
	}
	key := c.Param("key")
	f, err := p.store.Flags().CloneFlagRequesting(c.Request().Context(), actor(c), w.id, key, in)
	if err == nil {
		return p.flagCreated(c, f, fmt.Sprintf("Feature flag “%s” created as a copy.", f.Name), "")
	}
	form := p.form(c, "flag-clone", flagHref(key)+"/clone", postedValues(in.Change, map[string]string{"name": in.Name, "key": in.Key}))
	status, err := changeProblems(err, &form, "name", "key", "reason", "reviewers")
	if err != nil {
		return err
	}
	return p.flagPage(c, tabSettings, flagState{status: status, clone: &form})
}
