package web

// A flag's scheduled changes and change requests, on its targeting tab.

import (
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/views"
)

// pendingChanges shows a flag's scheduled changes in words, each with a
// cancel button when the person may make the change it would make.
func (p *pages) pendingChanges(c echo.Context, w workEnv, f flagstore.Flag, may flagstore.FlagRights, posted *views.Form, list []governance.PendingChange) (*views.PendingChanges, error) {
	if list == nil { // not read with the flag
		var err error
		if list, err = p.store.Governance().FlagPendingChanges(c.Request().Context(), actor(c), w.id, f.Key); err != nil {
			return nil, err
		}
	}
	out := &views.PendingChanges{Form: p.form(c, "pending", "", nil)}
	if posted != nil {
		out.Form = *posted
	}
	for _, pc := range list {
		names, err := p.segmentNames(c, w, describe.SegmentIDs(refFlag, pc.DataChange.Previous, pc.DataChange.Current))
		if err != nil {
			return nil, err
		}
		item := views.PendingChangeItem{Title: pc.ScheduleTitle, When: "Applies at " + when(pc.ScheduledTime), Who: pc.CreatorName,
			Note: pc.Note, Comment: pc.Comment, FailureReason: pc.FailureReason,
			Lines: describe.Change(refFlag, pc.DataChange.Previous, pc.DataChange.Current, names)}
		if pc.ChangeRequestID != nil {
			item.Href = changeRequestHref(*pc.ChangeRequestID)
			item.Status = requestStatus(pc.Status)
			if pc.Type == governance.PendingChangeRequest {
				item.Title, item.When, item.Comment = "Change request: "+pc.ChangeRequestReason, "Requested "+when(pc.CreatedAt), ""
				out.Items = append(out.Items, item)
				continue // withdrawn on its own page, by its author
			}
			item.Status = "Scheduled · " + item.Status
		}
		var base, target flagstore.Flag
		if json.Unmarshal(pc.DataChange.Previous, &base) == nil && json.Unmarshal(pc.DataChange.Current, &target) == nil &&
			!f.IsArchived && pc.ChangeRequestID == nil && !slices.ContainsFunc(flagstore.ChangeActions(base, target), func(a access.Action) bool { return !may.Permits(a) }) {
			item.CancelAction = flagHref(f.Key) + "/schedules/" + pc.ID.String() + "/cancel"
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// cancelSchedule cancels one of a flag's scheduled changes, or dismisses a
// failed one.
func (p *pages) cancelSchedule(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return core.ErrNotFound
	}
	return p.flagChange(c, tabTargeting, "Scheduled change cancelled.", func(w workEnv, key string) (*flagstore.Flag, error) {
		return nil, p.store.Governance().CancelFlagSchedule(c.Request().Context(), actor(c), w.id, id)
	}, func(form *views.Form) flagState {
		form.ID = "pending"
		return flagState{pending: form}
	})
}
