package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// The pages that compare the working environment with another one and copy
// flags or flag settings there. The store checks both environments.

// compareTargets lists the environments the person can open, other than
// the working one, as "Project / Env", with target selected; name is the
// chosen one's label ("" when none is chosen or it is not listed). When
// there is only one other environment it is the target whatever was asked,
// so the pages need not ask; chosen is the target in effect.
func (p *pages) compareTargets(c echo.Context, w workEnv, target uuid.UUID) (opts []views.Option, name string, chosen uuid.UUID, err error) {
	wp, err := p.workplace(c)
	if err != nil {
		return nil, "", uuid.Nil, err
	}
	var ids []uuid.UUID
	for _, pr := range wp.Projects {
		for _, e := range pr.Environments {
			if e.ID == w.id {
				continue
			}
			o := views.Option{Value: e.ID.String(), Label: pr.Name + " / " + e.Name, Selected: e.ID == target}
			if o.Selected {
				name = o.Label
			}
			opts = append(opts, o)
			ids = append(ids, e.ID)
		}
	}
	if len(opts) == 1 {
		opts[0].Selected = true
		return opts, opts[0].Label, ids[0], nil
	}
	return opts, name, target, nil
}

// targetParam reads the chosen target environment; uuid.Nil when none.
func targetParam(c echo.Context) uuid.UUID {
	id, _ := uuid.Parse(c.FormValue("target"))
	return id
}

func compareHref(key string, target uuid.UUID) string {
	return flagHref(key) + "/compare?target=" + target.String()
}

// compareEnvs shows the working environment's flags against a target.
func (p *pages) compareEnvs(c echo.Context) error {
	ctx, a := c.Request().Context(), actor(c)
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	targets, targetName, target, err := p.compareTargets(c, w, targetParam(c))
	if err != nil {
		return err
	}
	vm := views.CompareEnvs{Source: w.projectName + " / " + w.name, Targets: targets, Target: targetName, Query: c.QueryParam("q")}
	if targetName != "" {
		vm.TargetID = target.String()
		page := pageNumber(c.QueryParam("page"))
		list, err := p.store.FlagCopy().CompareOverview(ctx, a, w.id, flagcopy.CompareOverviewInput{TargetEnvIDs: []uuid.UUID{target},
			Filter: flagcopy.CompareFilter{Name: vm.Query, SortBy: "key", PageIndex: page - 1, PageSize: listPageSize}})
		if err != nil {
			return err
		}
		href := func(n int) string {
			q := url.Values{"target": {vm.TargetID}, "q": {vm.Query}, "page": {strconv.Itoa(n)}}
			return "/flags/compare?" + q.Encode()
		}
		vm.Pager = pager(list.TotalCount, page, listPageSize, "flag", "flags", href)
		vm.Empty = "No feature flags in this environment yet."
		if vm.Query != "" {
			vm.Empty = "No flags match."
		}
		for _, it := range list.Items {
			row := views.CompareRow{ID: it.ID.String(), Key: it.Key, Name: it.Name, Href: compareHref(it.Key, target), Missing: len(it.Diffs) == 0}
			if !row.Missing {
				d := it.Diffs[0]
				for i, differs := range []bool{d.OnOffState, d.Variations, d.IndividualTargeting, d.TargetingRule, d.DefaultRule, d.OffVariation} {
					row.Parts = append(row.Parts, views.ComparePart{Label: views.ComparedParts[i].Short, Differs: differs})
				}
			}
			vm.Rows = append(vm.Rows, row)
		}
	}
	if vm.Shell, err = p.shell(c, "Compare environments", navFlags); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.CompareEnvsPage(vm))
}

// flagCompare shows one flag side by side with the target's, and the
// settings copy with its preview.
func (p *pages) flagCompare(c echo.Context) error { return p.flagComparePage(c, http.StatusOK, "") }

// flagComparePage renders the comparison; problem is why a copy just
// confirmed was refused.
func (p *pages) flagComparePage(c echo.Context, status int, problem string) error {
	ctx, a := c.Request().Context(), actor(c)
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	key := c.Param("key")
	src, err := p.store.Flags().GetFlag(ctx, a, w.id, key)
	if err != nil {
		return err
	}
	targets, targetName, target, err := p.compareTargets(c, w, targetParam(c))
	if err != nil {
		return err
	}
	vm := views.FlagCompare{Name: src.Name, Key: src.Key, Source: w.projectName + " / " + w.name, Targets: targets, Target: targetName,
		Crumbs: []views.Crumb{{Label: "Feature flags", Href: "/flags"}, {Label: src.Name, Href: flagHref(src.Key)}}}
	if targetName != "" {
		vm.TargetID = target.String()
		d, err := p.store.FlagCopy().CompareFlag(ctx, a, w.id, key, target)
		switch {
		case errors.Is(err, flagcopy.ErrNotInTarget):
			vm.Missing = true
			vm.CopyHref = "/flags/copy?" + url.Values{"target": {vm.TargetID}, "flag": {src.ID.String()}}.Encode()
		case err != nil:
			return err
		default:
			vm.Rows = compareSides(*d)
			if vm.Copy, err = p.copySettingsForm(c, w, *d, target); err != nil {
				return err
			}
			if problem != "" {
				vm.Copy.Error = problem
			}
		}
	}
	if vm.Shell, err = p.shell(c, "Compare "+src.Name, navFlags); err != nil {
		return err
	}
	return render(c, status, views.FlagComparePage(vm))
}

// compareSides says each part of both flags in words, as the flag page does.
func compareSides(d flagcopy.CompareFlagDetail) []views.CompareSide {
	names := d.SegmentNames()
	lookup := func(id string) (string, bool) { n, ok := names[id]; return n, ok }
	src, tgt := describe.FlagSummary(d.Source, lookup), describe.FlagSummary(d.Target, lookup)
	variations := func(f flagstore.Flag) []string {
		out := make([]string, len(f.Variations))
		for i, v := range f.Variations {
			out[i] = variationLabel(v) + " (" + v.Value + ")"
		}
		return out
	}
	parts := func(ps []describe.Part) []string {
		if len(ps) == 0 {
			return []string{"None"}
		}
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Sentence
			if p.Name != "" {
				out[i] = p.Name + ": " + p.Sentence
			}
		}
		return out
	}
	o := d.Diff.Overview(uuid.Nil)
	return []views.CompareSide{
		{Part: views.PartOnOff.Short, Source: []string{src.Status}, Target: []string{tgt.Status}, Differs: o.OnOffState},
		{Part: views.PartVariations.Short, Source: variations(d.Source), Target: variations(d.Target), Differs: o.Variations},
		{Part: views.PartTargets.Short, Source: parts(src.Targets), Target: parts(tgt.Targets), Differs: o.IndividualTargeting},
		{Part: views.PartRules.Short, Source: parts(src.Rules), Target: parts(tgt.Rules), Differs: o.TargetingRule},
		{Part: views.PartDefault.Short, Source: []string{src.Default}, Target: []string{tgt.Default}, Differs: o.DefaultRule},
		{Part: views.PartOff.Short, Source: []string{src.Off}, Target: []string{tgt.Off}, Differs: o.OffVariation},
	}
}

// copyOptions reads the settings chosen on the page.
func copyOptions(c echo.Context) flagcopy.FlagSettingCopyOptions {
	on := func(name string) bool { return c.FormValue(name) == "on" }
	return flagcopy.FlagSettingCopyOptions{OnOffState: on("onOffState"),
		IndividualTargeting: flagcopy.CopyOption{Copy: on("individualTargeting"), Mode: c.FormValue("individualTargetingMode")},
		TargetingRule:       flagcopy.CopyOption{Copy: on("targetingRule"), Mode: c.FormValue("targetingRuleMode")},
		DefaultRule:         on("defaultRule"), OffVariation: on("offVariation")}
}

// copySettingsForm is the settings copy: the choices, and after Preview
// what the target's history entry will say and the button that confirms it.
func (p *pages) copySettingsForm(c echo.Context, w workEnv, d flagcopy.CompareFlagDetail, target uuid.UUID) (*views.CopySettings, error) {
	previewing := c.QueryParam("preview") == "1"
	o := copyOptions(c)
	if !previewing {
		o = flagcopy.FlagSettingCopyOptions{OnOffState: true, DefaultRule: true, OffVariation: true,
			IndividualTargeting: flagcopy.CopyOption{Mode: flagcopy.CopyOverwrite}, TargetingRule: flagcopy.CopyOption{Copy: d.IsRulesCopyable, Mode: flagcopy.CopyOverwrite}}
	}
	rulesHint := ""
	if !d.IsRulesCopyable {
		rulesHint = "The rules use segments " + d.TargetEnv + " cannot use, so they cannot be copied."
	}
	cs := &views.CopySettings{Action: flagHref(d.Source.Key) + "/compare",
		Choices: []views.CopyChoice{
			{Name: "onOffState", Label: views.PartOnOff.Label, Checked: o.OnOffState},
			{Name: "individualTargeting", Label: views.PartTargets.Label, Checked: o.IndividualTargeting.Copy},
			{Name: "targetingRule", Label: views.PartRules.Label, Checked: o.TargetingRule.Copy && d.IsRulesCopyable, Disabled: !d.IsRulesCopyable, Hint: rulesHint},
			{Name: "defaultRule", Label: views.PartDefault.Label, Checked: o.DefaultRule},
			{Name: "offVariation", Label: views.PartOff.Label, Checked: o.OffVariation},
		},
		TargetsMode: modeOptions(o.IndividualTargeting.Mode, "targets"),
		RulesMode:   modeOptions(o.TargetingRule.Mode, "rules"),
	}
	if !previewing {
		return cs, nil
	}
	ctx := c.Request().Context()
	plan, err := p.store.FlagCopy().PreviewCopyFlagSettings(ctx, actor(c), w.id, d.Source.Key, target, flagcopy.CopyFlagSettingsInput{Options: &o})
	if err != nil {
		if cs.Error, err = refusal(err); err != nil {
			return nil, err
		}
		return cs, nil
	}
	lookup := func(id string) (string, bool) { n, ok := plan.SegmentNames[id]; return n, ok }
	pv := &views.CopyPreview{Comment: plan.Comment, NoChange: flagstore.SameJSON(plan.Before, plan.After),
		Lines: describe.FlagChange(&plan.Before, &plan.After, lookup)}
	if plan.Refused != nil {
		if pv.Refused, err = refusal(plan.Refused); err != nil {
			return nil, err
		}
	}
	pv.Form = p.form(c, "copy-settings", flagHref(d.Source.Key)+"/copy-settings", nil)
	pv.Hidden = []views.Option{{Value: "target", Label: target.String()},
		{Value: "individualTargetingMode", Label: o.IndividualTargeting.Mode}, {Value: "targetingRuleMode", Label: o.TargetingRule.Mode}}
	for name, chosen := range map[string]bool{"onOffState": o.OnOffState, "individualTargeting": o.IndividualTargeting.Copy,
		"targetingRule": o.TargetingRule.Copy, "defaultRule": o.DefaultRule, "offVariation": o.OffVariation} {
		if chosen {
			pv.Hidden = append(pv.Hidden, views.Option{Value: name, Label: "on"})
		}
	}
	cs.Preview = pv
	return cs, nil
}

func modeOptions(selected, what string) []views.Option {
	return []views.Option{
		{Value: flagcopy.CopyOverwrite, Label: "Replace the target's " + what, Selected: selected != flagcopy.CopyAppend},
		{Value: flagcopy.CopyAppend, Label: "Add to the target's " + what, Selected: selected == flagcopy.CopyAppend},
	}
}

// refusal says in words why the store refused a request the person can fix
// or must be told about; any other error is returned for the error page.
func refusal(err error) (string, error) {
	if errors.Is(err, core.ErrForbidden) {
		return "You may not make this change in that environment.", nil
	}
	var f views.Form
	if _, e := changeProblems(err, &f); e != nil {
		return "", e
	}
	return f.Error, nil
}

// copyFlagSettings copies the confirmed settings to the target's flag.
func (p *pages) copyFlagSettings(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	key, target, o := c.Param("key"), targetParam(c), copyOptions(c)
	_, err = p.store.FlagCopy().CopyFlagSettings(c.Request().Context(), actor(c), w.id, key, target, flagcopy.CopyFlagSettingsInput{Options: &o})
	if err != nil {
		msg, rerr := refusal(err)
		if rerr != nil {
			return rerr
		}
		return p.flagComparePage(c, core.Classify(err).Status, msg)
	}
	p.keepFlash(c, "Settings copied.")
	return redirect(c, compareHref(key, target))
}

// copyFlags pre-checks copying the chosen flags to the chosen environment.
func (p *pages) copyFlags(c echo.Context) error {
	return p.copyFlagsPage(c, http.StatusOK, "")
}

func (p *pages) copyFlagsPage(c echo.Context, status int, problem string) error {
	ctx, a := c.Request().Context(), actor(c)
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	vm := views.CopyFlags{Source: w.projectName + " / " + w.name, Error: problem,
		Crumbs: []views.Crumb{{Label: "Feature flags", Href: "/flags"}, {Label: "Compare environments", Href: "/flags/compare"}}}
	for _, id := range chosenFlags(form) {
		if len(ids) < flagcopy.MaxCopyFlags {
			ids = append(ids, id)
			vm.FlagIDs = append(vm.FlagIDs, id.String())
		}
	}
	var target uuid.UUID
	if vm.Targets, vm.Target, target, err = p.compareTargets(c, w, targetParam(c)); err != nil {
		return err
	}
	switch {
	case len(ids) == 0:
		vm.Error = "Choose the flags to copy on the comparison page first."
	case vm.Target != "":
		vm.TargetID = target.String()
		checks, err := p.store.FlagCopy().CopyToEnvPrecheck(ctx, a, w.id, target, ids)
		if err != nil {
			if vm.Error, err = refusal(err); err != nil {
				return err
			}
			break
		}
		vm.Checks, vm.Blocked = copyChecks(checks, vm.Target)
		if vm.Blocked == "" {
			f := p.form(c, "copy-flags", "/flags/copy", map[string]string{"reason": c.FormValue("reason"),
				"reviewers": strings.Join(form["reviewers"], ",")})
			// Where the target's changes need approval, the copies come in
			// with change requests: the form asks for their reason and reviewers.
			n, may, err := p.store.Flags().NewFlagApprovers(ctx, a, target)
			if err != nil {
				return err
			}
			if n > 0 {
				f.Request = reviewerChoice(c, n, may, f.Values)
			}
			vm.Form = &f
		}
	}
	if vm.Shell, err = p.shell(c, "Copy flags", navFlags); err != nil {
		return err
	}
	return render(c, status, views.CopyFlagsPage(vm))
}

// copyChecks says each pre-check in words, and why the copy cannot go ahead
// ("" when it can).
func copyChecks(checks []flagcopy.CopyToEnvPrecheckResult, target string) ([]views.CopyCheck, string) {
	var out []views.CopyCheck
	blocked := ""
	for _, r := range checks {
		ch := views.CopyCheck{Key: r.Key, Name: r.Name, OK: r.Passed}
		if !r.KeyCheck {
			ch.Notes = append(ch.Notes, fmt.Sprintf("%s already has a flag with the key %s.", target, r.Key))
			blocked = "Nothing can be copied while a key is taken there: leave those flags out."
		}
		if !r.PermissionCheck {
			ch.Notes = append(ch.Notes, "You may not create this flag in "+target+".")
			blocked = "Nothing can be copied while you may not create one of the flags there."
		}
		if !r.TargetUserCheck {
			ch.Notes = append(ch.Notes, "Its individual targets are not copied: end users are per environment.")
		}
		if !r.TargetRuleCheck {
			names := ""
			for i, sg := range r.SegmentsNotVisible {
				if i > 0 {
					names += ", "
				}
				names += sg.Name
			}
			ch.Notes = append(ch.Notes, fmt.Sprintf("Its rules use segments %s cannot use (%s): it is copied without rules.", target, names))
		}
		out = append(out, ch)
	}
	return out, blocked
}

// copyFlagsConfirm copies the confirmed flags.
func (p *pages) copyFlagsConfirm(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	ids := chosenFlags(form)
	target := targetParam(c)
	req, err := newFlagRequest(c)
	if err != nil {
		return err
	}
	res, err := p.store.FlagCopy().CopyToEnv(c.Request().Context(), actor(c), w.id, target, flagcopy.CopyToEnvInput{FlagIDs: ids, NewFlagRequest: req})
	if err != nil {
		msg, rerr := refusal(err)
		if rerr != nil {
			return rerr
		}
		return p.copyFlagsPage(c, core.Classify(err).Status, msg)
	}
	if n := len(res.PendingApproval); n > 0 {
		p.keepFlash(c, fmt.Sprintf("%d %s copied, waiting for approval there: SDKs get nothing of %s until %s approved and applied.",
			n, plural(n, "flag", "flags"), plural(n, "it", "them"), plural(n, "its change request is", "their change requests are")))
		return redirect(c, "/flags/compare?target="+target.String())
	}
	p.keepFlash(c, fmt.Sprintf("%d %s copied.", res.CopiedCount, plural(res.CopiedCount, "flag", "flags")))
	return redirect(c, "/flags/compare?target="+target.String())
}

// chosenFlags are the flag ids the copy forms send as "flag" values; a value
// that is not an id names no flag and is left out.
func chosenFlags(form url.Values) []uuid.UUID {
	var ids []uuid.UUID
	for _, v := range form["flag"] {
		if id, err := uuid.Parse(v); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
