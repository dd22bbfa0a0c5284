package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// Change requests: where an environment's changes need approval, the flag
// page's forms ask for a reason and reviewers and make a change request
// (changeServing, as the store decides); these pages list the requests
// waiting for the person's review and show one, with the forms to approve,
// decline, apply and withdraw it. The store decides who may do each.

const navReviews = "reviews"

// requestedKey marks a request in which a change was requested rather than
// made, so the flag page says so.
const requestedKey = "change-requested"

func changeRequestHref(id uuid.UUID) string { return "/change-requests/" + id.String() }

// requestFields are the reviewers a change's form offers where changes need
// approval: those who may approve, but the person; chosen ones (values'
// "reviewers", comma-separated) selected. Nil where changes need none.
func (p *pages) requestFields(c echo.Context, w workEnv, values map[string]string) (*views.ChangeRequestFields, error) {
	if w.approvals == 0 {
		return nil, nil
	}
	approvers, err := p.store.Flags().Approvers(c.Request().Context(), actor(c), w.id)
	if err != nil {
		return nil, err
	}
	return reviewerChoice(c, w.approvals, approvers, values), nil
}

// reviewerChoice offers approvers, but the person, as a request's
// reviewers, the chosen ones (values' "reviewers", comma-separated)
// selected, where a change needs approvals.
func reviewerChoice(c echo.Context, approvals int, approvers []flagstore.Approver, values map[string]string) *views.ChangeRequestFields {
	chosen := strings.Split(values["reviewers"], ",")
	out := &views.ChangeRequestFields{Approvals: approvals}
	for _, ap := range approvers {
		if ap.ID == actor(c).UserID {
			continue
		}
		out.Reviewers = append(out.Reviewers, views.Option{Value: ap.ID.String(), Label: ap.Name, Selected: slices.Contains(chosen, ap.ID.String())})
	}
	// The one person who may review is chosen already, until a form posted
	// says otherwise.
	if _, posted := values["reviewers"]; !posted && len(out.Reviewers) == 1 {
		out.Reviewers[0].Selected = true
	}
	return out
}

// withRequest gives a flag change's form its request fields where changes
// need approval, keeping the reason and reviewers just posted.
func (p *pages) withRequest(c echo.Context, w workEnv, f *views.Form) error {
	if w.approvals == 0 || f == nil {
		return nil
	}
	if c.Request().Method == http.MethodPost {
		if _, ok := f.Values["reason"]; !ok {
			f.Values["reason"] = c.FormValue("reason")
		}
		if _, ok := f.Values["reviewers"]; !ok {
			if params, err := c.FormParams(); err == nil {
				f.Values["reviewers"] = strings.Join(params["reviewers"], ",")
			}
		}
	}
	var err error
	f.Request, err = p.requestFields(c, w, f.Values)
	return err
}

// newFlagRequest reads the change request a new flag comes in with where
// the environment's changes need approval (the store asks for it there,
// and ignores it elsewhere): the posted reason and reviewers.
func newFlagRequest(c echo.Context) (flagstore.NewFlagRequest, error) {
	reviewers, err := formIDs(c, "reviewers")
	return flagstore.NewFlagRequest{Reason: c.FormValue("reason"), Reviewers: reviewers}, err
}

// flagCreated opens what a flag created, cloned or copied in leads to: the
// flag's page (or next, when given) with message; where the flag came in
// pending, the change request that brings it in, saying so.
func (p *pages) flagCreated(c echo.Context, f flagstore.CreatedFlag, message, next string) error {
	if f.PendingApproval != nil {
		p.keepFlash(c, fmt.Sprintf(pendingFlagMessage, f.Name))
		return redirect(c, changeRequestHref(f.PendingApproval.ChangeRequestID))
	}
	p.keepFlash(c, message)
	if next == "" {
		next = flagHref(f.Key)
	}
	return redirect(c, next)
}

// pendingFlagMessage is what the change request's page says to the author
// of a flag created where changes need approval.
const pendingFlagMessage = "Feature flag “%s” created, waiting for approval: SDKs get nothing of it until this change request is approved and applied."

// requestedMessage is what the flag page says after a change was requested.
const requestedMessage = "Change request sent to its reviewers: it applies once approved."

// changeRequests lists the working environment's change requests waiting
// for the person's review.
func (p *pages) changeRequests(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	list, err := p.store.Governance().ListAwaitingReview(c.Request().Context(), actor(c), w.id)
	if err != nil {
		return err
	}
	vm := views.ChangeRequests{Env: w.view(true), Approvals: w.approvals}
	for _, cr := range list {
		lines, err := p.changeLines(c, w, cr)
		if err != nil {
			return err
		}
		vm.Waiting = append(vm.Waiting, views.ChangeRequestItem{Href: changeRequestHref(cr.ID), Flag: cr.FlagKey, Reason: cr.Reason,
			Who: cr.CreatorName, When: when(cr.CreatedAt), Status: approvalCount(cr), Lines: lines})
	}
	if vm.Shell, err = p.shell(c, "Waiting for your review", navReviews); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ChangeRequestsPage(vm))
}

// changeLines says a request's change in words, as the history page does;
// a new flag's request, everything the flag will serve.
func (p *pages) changeLines(c echo.Context, w workEnv, cr flagstore.FlagChangeRequest) ([]string, error) {
	names, err := p.segmentNames(c, w, describe.SegmentIDs(refFlag, cr.DataChange.Previous, cr.DataChange.Current))
	if err != nil {
		return nil, err
	}
	return cr.Lines(names), nil
}

// changeRequest shows one change request of the working environment.
func (p *pages) changeRequest(c echo.Context) error {
	return p.changeRequestPage(c, http.StatusOK, nil)
}

// changeRequestPage renders a change request; posted carries a refused
// action's form.
func (p *pages) changeRequestPage(c echo.Context, status int, posted *views.Form) error {
	w, elsewhere, cr, err := p.pathChangeRequest(c)
	if err != nil {
		return err
	}
	a := actor(c)
	lines, err := p.changeLines(c, w, cr)
	if err != nil {
		return err
	}
	href := changeRequestHref(cr.ID)
	vm := views.ChangeRequestPage{Flag: cr.FlagKey, Reason: cr.Reason, Who: cr.CreatorName,
		When: when(cr.CreatedAt), Lines: lines, Form: p.form(c, "change-request", href, nil),
		Approvals: approvalCount(cr) + " needed",
		Crumbs:    []views.Crumb{{Label: "Feature flags", Href: "/flags"}, {Label: cr.FlagKey, Href: flagHref(cr.FlagKey)}}}
	if posted != nil {
		vm.Form = *posted
	}
	if elsewhere {
		// The flag's links would open the working environment's: the page
		// says where the request is, and offers to work there.
		vm.Crumbs = nil
		vm.Elsewhere = fmt.Sprintf("This change request is in %s / %s, not the environment you work in.", w.projectName, w.name)
		vm.SwitchEnvID, vm.SwitchLabel = w.id.String(), fmt.Sprintf("Work in %s / %s", w.projectName, w.name)
	}
	vm.Status, vm.StatusKind = map[string]string{
		flagstore.ChangeRequestPendingReview: "Waiting for review", flagstore.ChangeRequestApproved: "Approved",
		flagstore.ChangeRequestDeclined: "Declined", flagstore.ChangeRequestApplied: "Applied"}[cr.Status], map[string]string{
		flagstore.ChangeRequestPendingReview: "blue", flagstore.ChangeRequestApproved: "green",
		flagstore.ChangeRequestDeclined: "amber", flagstore.ChangeRequestApplied: "gray"}[cr.Status]
	if cr.NewFlag && cr.Status != flagstore.ChangeRequestApplied {
		vm.NewFlag = "This change request brings in a new flag, which waits archived until it is approved and applied. " +
			"Declining or withdrawing it removes the new flag, and its key is free to use again."
	}
	if cr.ScheduleID != nil {
		vm.Scheduled = "Scheduled: it applies at its time once approved (see the flag's pending changes)."
	}
	for _, r := range cr.Reviewers {
		item := views.ReviewerItem{Name: r.Name, Comment: r.Comment, Decision: map[string]string{
			flagstore.ReviewEmpty: "not decided yet", flagstore.ReviewApprove: "approved", flagstore.ReviewDecline: "declined"}[r.Action]}
		if r.Timestamp != nil {
			item.When = when(*r.Timestamp)
		}
		vm.Reviewers = append(vm.Reviewers, item)
	}
	// Offer what the store would allow; it refuses the rest anyway. A
	// reviewer who decided is offered only the other decision, which the
	// store allows until the change is applied.
	mine, reviewer := cr.Reviewer(a.UserID)
	author := cr.CreatorID == a.UserID
	if cr.Status != flagstore.ChangeRequestApplied {
		if reviewer && !author {
			switch mine.Action {
			case flagstore.ReviewApprove:
				vm.Decided, vm.DeclineAction = "You approved it. You may still decline it until it is applied.", href+"/decline"
			case flagstore.ReviewDecline:
				vm.Decided, vm.ApproveAction = "You declined it. You may still approve it until it is applied.", href+"/approve"
			default:
				vm.ApproveAction, vm.DeclineAction = href+"/approve", href+"/decline"
			}
		}
		if cr.Status == flagstore.ChangeRequestApproved && cr.ScheduleID == nil && (reviewer || author) {
			vm.ApplyAction = href + "/apply"
		}
		if author {
			vm.WithdrawAction = href + "/withdraw"
		}
	}
	if vm.Shell, err = p.shell(c, "Change request · "+cr.FlagKey, navFlags); err != nil {
		return err
	}
	return render(c, status, views.ChangeRequestView(vm))
}

// changeRequestAction runs an action on the change request of the path;
// success goes where done says with its message, failure shows the request
// again with the problem.
func (p *pages) changeRequestAction(c echo.Context, done func(flagstore.FlagChangeRequest) (message, next string),
	do func(w workEnv, id uuid.UUID) error) error {
	w, elsewhere, cr, err := p.pathChangeRequest(c)
	if err != nil {
		return err
	}
	id := cr.ID
	if err = do(w, id); err == nil {
		message, next := done(cr)
		p.keepFlash(c, message)
		if elsewhere && next != flagListPath {
			// The flag's page would be the working environment's; a new
			// flag's request that removed it is gone with it.
			next = backToRequest(cr)
		}
		return redirect(c, next)
	}
	f := p.form(c, "change-request", changeRequestHref(id), map[string]string{"comment": c.FormValue("comment")})
	status, err := changeProblems(err, &f, "comment")
	if err != nil {
		return err
	}
	return p.changeRequestPage(c, status, &f)
}

// requestDone is where a done action on a change request leads: its message
// and next. A new flag's request declined or withdrawn (how says which)
// removed the flag (the store's removeNewFlag), and with it the request, so
// it leads to the flag list and says so.
func requestDone(message string, next func(flagstore.FlagChangeRequest) string, how string) func(flagstore.FlagChangeRequest) (string, string) {
	return func(cr flagstore.FlagChangeRequest) (string, string) {
		if cr.NewFlag && how != "" {
			return fmt.Sprintf(removedFlagMessage, how, cr.FlagKey), flagListPath
		}
		return message, next(cr)
	}
}

// flagListPath is the flag list, where a removed new flag's request leads.
const flagListPath = "/flags"

// removedFlagMessage is what the flag list says after a new flag's change
// request was declined or withdrawn (%s: how, the flag's key).
const removedFlagMessage = "Change request %s: the new flag “%s” was removed, and its key is free to use again."

// approvalCount says how many approvals a request has of those it needs
// ("1 of 1 approval").
func approvalCount(cr flagstore.FlagChangeRequest) string {
	return fmt.Sprintf("%d of %d %s", cr.Approvals(), cr.ApprovalsRequired, plural(cr.ApprovalsRequired, "approval", "approvals"))
}

func backToRequest(cr flagstore.FlagChangeRequest) string { return changeRequestHref(cr.ID) }
func toFlag(cr flagstore.FlagChangeRequest) string        { return flagHref(cr.FlagKey) }

// reviewChangeRequest approves or declines a change request with a comment.
func (p *pages) reviewChangeRequest(approve bool) echo.HandlerFunc {
	decide, done := p.store.Governance().DeclineFlagChangeRequest, requestDone("Change request declined.", backToRequest, "declined")
	if approve {
		decide, done = p.store.Governance().ApproveFlagChangeRequest, requestDone("Change request approved.", backToRequest, "")
	}
	return func(c echo.Context) error {
		return p.changeRequestAction(c, done, func(w workEnv, id uuid.UUID) error {
			_, err := decide(c.Request().Context(), actor(c), w.id, id, governance.ReviewInput{Comment: c.FormValue("comment")})
			return err
		})
	}
}

// applyChangeRequest applies an approved change request.
func (p *pages) applyChangeRequest(c echo.Context) error {
	return p.changeRequestAction(c, requestDone("Change request applied.", toFlag, ""), func(w workEnv, id uuid.UUID) error {
		_, err := p.store.Governance().ApplyFlagChangeRequest(c.Request().Context(), actor(c), w.id, id)
		return err
	})
}

// withdrawChangeRequest withdraws the person's own change request.
func (p *pages) withdrawChangeRequest(c echo.Context) error {
	return p.changeRequestAction(c, requestDone("Change request withdrawn.", toFlag, "withdrawn"), func(w workEnv, id uuid.UUID) error {
		return p.store.Governance().DeleteFlagChangeRequest(c.Request().Context(), actor(c), w.id, id)
	})
}

// requestStatus names a change request's (or its schedule's) status.
func requestStatus(status string) string {
	switch status {
	case flagstore.ChangeRequestApproved, "PendingExecution":
		return "Approved"
	case flagstore.ChangeRequestDeclined:
		return "Declined"
	case flagstore.ChangeRequestApplied:
		return "Applied"
	}
	return "Waiting for review"
}

// pathChangeRequest reads the change request the path's id names, as the
// caller may see it, in the environment it was made in: a reviewer follows
// a link to it from wherever they work. elsewhere says that is not the
// working environment; w then names the request's.
func (p *pages) pathChangeRequest(c echo.Context) (w workEnv, elsewhere bool, cr flagstore.FlagChangeRequest, err error) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return workEnv{}, false, flagstore.FlagChangeRequest{}, err
	}
	ctx, a := c.Request().Context(), actor(c)
	env, err := p.store.Governance().FlagChangeRequestEnv(ctx, a, id)
	if err != nil {
		return workEnv{}, false, flagstore.FlagChangeRequest{}, err
	}
	w, ok := workEnvOf(c)
	if elsewhere = !ok || w.id != env.Environment.ID; elsewhere {
		w = workEnv{id: env.Environment.ID, projectKey: env.ProjectKey, projectName: env.ProjectName,
			key: env.Environment.Key, name: env.Environment.Name}
	}
	cr, err = p.store.Governance().GetFlagChangeRequest(ctx, a, w.id, id)
	return w, elsewhere, cr, err
}
