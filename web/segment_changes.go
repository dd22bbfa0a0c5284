package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// The forms of a segment's page: who is in it, its texts, and archiving,
// restoring and deleting it.

// segmentChange is the part every segment change shares, as flagChange:
// do makes the change and returns the segment it left.
func (p *pages) segmentChange(c echo.Context, tab, message string, do func(w workEnv, id uuid.UUID) (*flagstore.Segment, error),
	form func(f *views.Form) segmentState, fields ...string) error {
	w, id, err := actingEnvAndID(c)
	if err != nil {
		return err
	}
	changed, err := do(w, id)
	st := segmentState{segment: changed, served: err == nil && changed != nil && isHTMX(c) && tab == tabTargeting}
	return p.subjectChange(c, tabHref(segmentHref(id.String()), tab), message, err, func(f *views.Form) { st = form(f) },
		func(status int, _ *views.Form) error {
			st.status = status
			return p.segmentPage(c, tab, st)
		}, fields...)
}

// segmentChanged is the segment a change left, for segmentChange.
func segmentChanged(sg flagstore.Segment, err error) (*flagstore.Segment, error) {
	if err != nil {
		return nil, err
	}
	return &sg, nil
}

// setSegmentTargeting saves who is in a segment, or applies one of the rule
// editor's buttons and shows it again unsaved. The editor is sent whole: the
// store checks only the parts that change.
func (p *pages) setSegmentTargeting(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ch, params, err := postedEditor[changeForm](c)
	if err != nil {
		return err
	}
	rules := parseRules(params, nil, false)
	values := postedValues(ch, map[string]string{"included": c.FormValue("included"), "excluded": c.FormValue("excluded")})
	state := func(f *views.Form) segmentState {
		f.ID, f.Action, f.Values = "segment-targeting", segmentHref(id.String())+"/targeting", values
		return segmentState{targeting: f, rules: rules}
	}
	if edit := c.FormValue("edit"); edit != "" {
		var focus, message string
		rules, focus, message = editRules("segment-targeting", rules, edit, nil)
		focusOn(c, focus)
		announce(c, message)
		f := p.form(c, "", "", nil)
		return p.segmentPage(c, tabTargeting, state(&f))
	}
	included, excluded := userKeys(c.FormValue("included")), userKeys(c.FormValue("excluded"))
	storeRules := make([]flagstore.SegmentRule, len(rules))
	for i, r := range rules {
		storeRules[i] = flagstore.SegmentRule{ID: r.id, Name: r.name, Conditions: conditions(r.conds)}
	}
	in := segments.SegmentTargetingInput{Change: ch, Included: &included, Excluded: &excluded, Rules: &storeRules}
	return p.segmentChange(c, tabTargeting, "Segment targeting saved.", func(w workEnv, id uuid.UUID) (*flagstore.Segment, error) {
		sg, err := p.store.Segments().SetSegmentTargeting(c.Request().Context(), actor(c), w.id, id, in)
		if err == nil {
			focusOn(c, "segment-targeting-heading") // the editor stays; its heading is where the keyboard starts again
		}
		return segmentChanged(sg, err)
	}, state, "included", "excluded", "rules")
}

// changeSegmentText changes text t of a segment with change, given the
// text as typed.
func (p *pages) changeSegmentText(c echo.Context, t textField,
	change func(ctx context.Context, a *core.Actor, envID, id uuid.UUID, text string, ch flagstore.Change) (flagstore.Segment, error)) error {
	text, ch, err := postedText(c, t)
	if err != nil {
		return err
	}
	return p.segmentChange(c, tabSettings, t.saved, func(w workEnv, id uuid.UUID) (*flagstore.Segment, error) {
		return segmentChanged(change(c.Request().Context(), actor(c), w.id, id, text, ch))
	}, func(f *views.Form) segmentState {
		var st segmentState
		st.texts.again(t, f, "segment", segmentHref(c.Param("id")), text, ch)
		return st
	}, t.name)
}

// renameSegment changes a segment's name.
func (p *pages) renameSegment(c echo.Context) error {
	return p.changeSegmentText(c, textName, func(ctx context.Context, a *core.Actor, envID, id uuid.UUID, text string, ch flagstore.Change) (flagstore.Segment, error) {
		return p.store.Segments().RenameSegment(ctx, a, envID, id, segments.SegmentNameInput{Name: text, Change: ch})
	})
}

// describeSegment changes a segment's description.
func (p *pages) describeSegment(c echo.Context) error {
	return p.changeSegmentText(c, textDescription, func(ctx context.Context, a *core.Actor, envID, id uuid.UUID, text string, ch flagstore.Change) (flagstore.Segment, error) {
		return p.store.Segments().SetSegmentDescription(ctx, a, envID, id, flagstore.DescriptionInput{Description: &text, Change: ch})
	})
}

// tagSegment replaces a segment's tags, typed separated by commas.
func (p *pages) tagSegment(c echo.Context) error {
	return p.changeSegmentText(c, textTags, func(ctx context.Context, a *core.Actor, envID, id uuid.UUID, text string, ch flagstore.Change) (flagstore.Segment, error) {
		tags := tagList(text)
		return p.store.Segments().SetSegmentTags(ctx, a, envID, id, flagstore.TagsInput{Tags: &tags, Change: ch})
	})
}

// segmentLifecycle is archiving, restoring or deleting a segment.
type segmentLifecycle struct {
	lifecycle
	consequence string
	do          func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch flagstore.Change) error
	to          func(id uuid.UUID) string
}

var (
	archiveSegment = segmentLifecycle{lifecycle: lifecycle{verb: "Archive", button: "Archive segment", action: access.ArchiveSegment, done: "archived", danger: true},
		consequence: "Flag rules can no longer name it; you can restore it, or delete it.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch flagstore.Change) error {
			_, err := p.store.Segments().ArchiveSegment(c.Request().Context(), actor(c), w.id, id, ch)
			return err
		},
		to: func(id uuid.UUID) string { return segmentHref(id.String()) + "/settings" }}
	restoreSegment = segmentLifecycle{lifecycle: lifecycle{verb: "Restore", button: "Restore segment", action: access.RestoreSegment, done: "restored"},
		consequence: "Flag rules can name it again.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch flagstore.Change) error {
			_, err := p.store.Segments().RestoreSegment(c.Request().Context(), actor(c), w.id, id, ch)
			return err
		},
		to: func(id uuid.UUID) string { return segmentHref(id.String()) + "/settings" }}
	deleteSegment = segmentLifecycle{lifecycle: lifecycle{verb: "Delete", button: "Delete segment", action: access.DeleteSegment, done: "deleted", danger: true},
		consequence: "The segment and its users and rules are deleted for good; this cannot be undone. Its history stays in the audit log.",
		do: func(p *pages, c echo.Context, w workEnv, id uuid.UUID, ch flagstore.Change) error {
			return p.store.Segments().DeleteSegment(c.Request().Context(), actor(c), w.id, id, ch)
		},
		to: func(uuid.UUID) string { return "/segments" }}
)

// confirmSegment asks before archiving, restoring or deleting a segment.
func (p *pages) confirmSegment(l segmentLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error { return p.confirmSegmentPage(c, l, http.StatusOK, nil) }
}

func (p *pages) confirmSegmentPage(c echo.Context, l segmentLifecycle, status int, posted *views.Form) error {
	ctx := c.Request().Context()
	a := actor(c)
	w, id, err := actingEnvAndID(c)
	if err != nil {
		return err
	}
	sg, err := p.store.Segments().GetSegment(ctx, a, w.id, id)
	if err != nil {
		return err
	}
	usage, err := p.store.Segments().SegmentUsageOf(ctx, a, w.id, sg.ID)
	if err != nil {
		return err
	}
	href := segmentHref(sg.ID.String())
	vm := views.ChangeConfirm{Crumbs: []views.Crumb{{Label: "Segments", Href: "/segments"}, {Label: sg.Name, Href: href}},
		Heading: subjectHeading(l.lifecycle, "segment", sg.Name), Consequences: []string{l.consequence}}
	if len(usage.Flags)+usage.Hidden > 0 && l.verb != "Restore" {
		names := make([]string, len(usage.Flags), len(usage.Flags)+1)
		for i, r := range usage.Flags {
			names[i] = "“" + r.Name + "”"
		}
		if usage.Hidden > 0 {
			names = append(names, hiddenFlags(usage.Hidden))
		}
		vm.Consequences = append(vm.Consequences, fmt.Sprintf("Flags use it: %s. It cannot be archived or deleted until no flag does.",
			strings.Join(names, ", ")))
	}
	may, err := p.store.Flags().SegmentRights(ctx, a, w.id, sg)
	if err != nil {
		return err
	}
	return p.confirm(c, w, confirmation{lifecycle: l.lifecycle, nav: navSegments, href: href, page: vm,
		permitted: may.Permits(l.action)}, status, posted)
}

// changeSegmentLifecycle archives, restores or deletes a segment, as confirmed.
func (p *pages) changeSegmentLifecycle(l segmentLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, id, err := actingEnvAndID(c)
		if err != nil {
			return err
		}
		return p.changeLifecycle(c, l.lifecycle, segmentHref(id.String()), "Segment "+l.done+".",
			func() string { return l.to(id) },
			func(ch flagstore.Change) error { return l.do(p, c, w, id, ch) },
			func(status int, posted *views.Form) error { return p.confirmSegmentPage(c, l, status, posted) })
	}
}
