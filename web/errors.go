package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// Problems with one field, by code; others are explained by their suffix.
// Limits come from the store, which checks them.
var fieldMessages = map[string]string{
	"email_is_required":                     "Enter your email.",
	"password_is_required":                  "Enter your password.",
	"name_is_invalid":                       fmt.Sprintf("Use at most %d characters.", core.MaxNameLen),
	"key_is_invalid":                        fmt.Sprintf("Use at most %d letters, digits, “.”, “_” or “-”.", core.MaxKeyLen),
	"key_is_immutable":                      "The key cannot change once created.",
	"description_is_invalid":                fmt.Sprintf("Use at most %d characters.", core.MaxDescriptionLen),
	"newPassword_is_invalid":                fmt.Sprintf("Use %d to %d characters.", iam.MinPasswordLen, iam.MaxPasswordLen),
	"permissions_is_invalid":                "Enter a JSON array of valid statements; Personal tokens take none.",
	"statements_is_invalid":                 fmt.Sprintf("A policy holds at most %d valid statements, each naming an action at most once.", access.MaxStatements),
	"type_is_invalid":                       "Choose one of the types offered.",
	"alpha_is_invalid":                      "Enter a level between 0 and 1, such as 0.05.",
	"metricId_is_required":                  "Choose a metric.",
	"metricId_is_invalid":                   "Choose one of the metrics offered.",
	"baselineVariationId_is_invalid":        "Choose one of the flag's variations.",
	"eventName_is_required":                 "Enter the event name the application tracks.",
	"authorizationEndpoint_is_invalid":      "Enter an absolute http or https URL.",
	"tokenEndpoint_is_invalid":              "Enter an absolute http or https URL.",
	"issuer_is_invalid":                     "Enter an absolute http or https URL.",
	"scope_is_invalid":                      "Separate scopes with spaces and include openid.",
	"clientAuthenticationMethod_is_invalid": "Choose one of the methods offered.",
	"policyIds_is_invalid":                  "Choose among this organization's policies.",
	"groupIds_is_invalid":                   "Choose among this organization's groups.",
	"defaultPermissions_is_invalid":         "Choose among this organization's policies and groups.",
	"comment_is_required":                   "This environment requires a comment for every change.",
	"comment_is_invalid":                    fmt.Sprintf("Use at most %d characters.", core.MaxCommentLen),
	"variationType_is_invalid":              "Choose one of the types offered.",
	"variations_is_invalid":                 fmt.Sprintf("Give every variation a name and a value of the flag's type (true or false, a number, JSON); at most %d.", targeting.MaxVariations),
	"disabledVariationId_is_invalid":        "Choose one of the flag's variations.",
	"offVariationId_is_required":            "Choose one of the flag's variations.",
	"tags_is_invalid":                       fmt.Sprintf("Separate tags with commas; a tag has at most %d characters, no “:” or “;”, and appears once.", targeting.MaxTagLen),
	"targetUsers_is_invalid":                "A user may be targeted once, to a variation of the flag.",
	"rules_is_invalid":                      "A rule is not valid: each needs at least one condition with an attribute; numeric operators need numbers, regex operators valid expressions (RE2), segment conditions segments that are not archived.",
	"fallthrough_is_invalid":                "Choose a variation, or percentages that add up to 100.",
	"included_is_invalid":                   fmt.Sprintf("User keys may not be empty or longer than %d characters.", targeting.MaxKeyIDLen),
	"excluded_is_invalid":                   fmt.Sprintf("User keys may not be empty or longer than %d characters.", targeting.MaxKeyIDLen),
	"environments_is_invalid":               fmt.Sprintf("Give 1 to %d different names, separated by commas; each name in lower case becomes its key (letters, digits, “.”, “_” and “-”).", iam.MaxOnboardingEnvironments),
	"scopes_is_invalid":                     "Choose among the environments offered.",
}

// Business rules that concern one field of the form that broke them.
var ruleFields = map[string]string{
	"KeyHasBeenUsed":        "key",
	"NameHasBeenUsed":       "name",
	"EmailPasswordMismatch": "currentPassword",
}

var ruleMessages = map[string]string{
	"KeyHasBeenUsed":        "This key is already used.",
	"NameHasBeenUsed":       "This name is already used.",
	"EmailPasswordMismatch": "This is not your current password.",

	// Rules of identity and access management.
	"CannotDeleteLastOrganization": "A workspace keeps at least one organization. Create another before deleting this one.",
	"TooManyOrganizations": fmt.Sprintf("No more organizations can be created: a workspace holds at most %d, and one person may create at most %d. Delete one you no longer need first.",
		iam.MaxWorkspaceOrganizations, iam.MaxCreatedOrganizations),
	"EmailHasBeenUsed":                  "Another user already has this email.",
	"CannotRemoveLastOwner":             "This would leave the organization without an owner. Give another member the Owner policy first.",
	"CannotModifySysManagedPolicy":      "Built-in policies cannot be changed. Clone the policy to make your own version.",
	"MetricIsBeingUsedByExperiment":     "An experiment measures this metric, so it cannot be archived. Remove the experiment first (on its page, Remove experiment…).",
	"SegmentIsBeingUsed":                "Flags use this segment, so it cannot be archived, deleted or moved out of their environments. Remove it from their rules first (see its Flags tab).",
	"CannotDeleteUnarchivedFeatureFlag": "Archive the flag before deleting it.",
	"FlagIsArchived":                    "This flag is archived: restore it in Settings to change it again.",
	"FlagScheduleIsNotPending":          "This scheduled change was applied or cancelled already.",

	// Change requests.
	"ChangeRequestRequired":        "Changes in this environment need approval: request the change on the flag's page.",
	"ChangeRequestNotEnabled":      "Changes in this environment need no approval: make the change directly.",
	"ChangeRequestChangesNothing":  "This would leave the flag as it is: there is nothing to request.",
	"CannotReviewOwnChangeRequest": "You cannot approve or decline your own change request.",
	"NotAReviewerOfChangeRequest":  "You are not a reviewer of this change request, or may no longer approve in this environment.",
	"ChangeRequestNotApproved":     "This change request does not have enough approvals yet.",
	"ChangeRequestDeclined":        "This change request was declined and cannot be applied.",
	"ChangeRequestAlreadyApplied":  "This change request has already been applied.",
	"ChangeRequestIsScheduled":     "This change request is scheduled: it applies at its time once approved.",
	"FlagAwaitsApproval": "This new flag waits for the change request that brings it in: approved and applied, it restores the flag; " +
		"declined or withdrawn, it removes the flag. It cannot be restored or deleted otherwise.",
}

// approvalWords say, by what needed approval, why a change was refused
// where changes need approval (%s: the environment, "Web/Prod").
var approvalWords = map[string]string{
	flagstore.ApprovalFlagChange: "Changes in %s need approval: request the change on the flag's page.",
	flagstore.ApprovalFlagLifecycle: "Changes in %s need approval, and archiving, restoring or deleting a flag changes what applications get " +
		"there. No change request covers it: whoever manages the environment's settings can turn approval off for it.",
	flagstore.ApprovalNewFlag: "Changes in %s need approval, and a new flag is one even switched off: applications would get its " +
		"off variation at once. Give a reason and choose reviewers: the flag comes in once they approve it.",
	flagstore.ApprovalPendingFlag: "This is a new flag in %s that waits for the change request that brings it in: approved and applied, " +
		"it comes in; declined or withdrawn, it is removed. Open that request from the flag's pending changes.",
	flagstore.ApprovalSegment: "Flags in %s use this segment, and changes there need approval: who is in it cannot change while " +
		"they use it. Remove it from their rules with a change request first, or ask whoever manages that environment's settings.",
}

// codeMessage explains a validation code like "name_is_required".
func codeMessage(code string) string {
	if m, ok := fieldMessages[code]; ok {
		return m
	}
	field, problem, _ := strings.Cut(code, "_is_")
	if problem == "required" {
		return "Required."
	}
	return "This " + field + " is not valid."
}

// formProblems puts the problems err reports about a form's fields next to
// them (f.Errors) and the rest above the form (f.Error), and returns the
// status to answer with. Any other error (403, 404, 500…) is returned for the
// error handler; nil err answers 200.
func formProblems(err error, f *views.Form, fields ...string) (int, error) {
	var verr *core.ValidationError
	var rerr *core.RuleError
	f.Errors = map[string]string{}
	switch {
	case err == nil:
		return http.StatusOK, nil
	case errors.As(err, &verr):
		var rest []string
		for i, code := range verr.Codes {
			field, _, _ := strings.Cut(code, "_is_")
			msg := codeMessage(code)
			// A problem inside a field (a rule's condition, a variation's
			// value) marks that input with why, and the field says where.
			if i < len(verr.Details) && verr.Details[i].Message != "" {
				d := verr.Details[i]
				f.Errors[d.Path] = upperFirst(d.Message) + "."
				msg = placeWords(d.Path) + ": " + d.Message + "."
			}
			if slices.Contains(fields, field) {
				f.Errors[field] = msg
			} else {
				rest = append(rest, msg)
			}
		}
		f.Error = strings.Join(rest, " ")
		return http.StatusBadRequest, nil
	case errors.As(err, &rerr) && slices.Contains(fields, ruleFields[rerr.Code]):
		f.Errors[ruleFields[rerr.Code]] = ruleMessages[rerr.Code]
		return http.StatusUnprocessableEntity, nil
	}
	return 0, err
}

// pageError is how a failed page request is explained.
type pageError struct {
	status        int
	heading, text string
}

// classWords are what the person is told for each class of error named by
// a single code, the store's or HTTP's own (httpx.Classify); validation and
// business rule codes are explained one by one.
var classWords = map[string][2]string{
	"ClientClosedRequest": {"Request cancelled", "The request was cancelled before its answer."},
	"Forbidden":           {"Not allowed", "You do not have permission to do this. Ask an administrator if you need to."},
	"ResourceNotFound":    {"Not found", "This page does not exist, or you cannot see it."},
	"Conflict":            {"Changed meanwhile", "Someone else changed this at the same time. Reload the page and try again."},
	"TooManyRequests":     {"Too many attempts", "Wait a few minutes and try again."},
	"ServiceUnavailable":  {"Unavailable", "Bunting cannot reach its database right now. Try again in a moment."},
	"MethodNotAllowed":    {"Not here", "This address does not take that kind of request."},
	"RequestTooLarge":     {"Too large", "What you sent is larger than Bunting accepts."},
	"TooManyFields":       {"Too many fields", "This form has more fields than Bunting accepts. Split the change into smaller ones."},
	"RequestTimeout":      {"Too slow", "What you sent arrived too slowly, and Bunting stopped waiting for it. Check your connection and try again."},
}

// explain says what the person is told about an error: the store's
// classification decides the status, and this only chooses the words, or
// for what the store does not know, the pages' own errors and HTTP's.
func explain(err error) pageError {
	class := core.Classify(err)
	switch class.Status {
	case http.StatusBadRequest:
		msgs := make([]string, len(class.Codes))
		for i, code := range class.Codes {
			msgs[i] = codeMessage(code)
		}
		return pageError{class.Status, "Invalid request", strings.Join(msgs, " ")}
	case http.StatusUnprocessableEntity:
		msg, ok := ruleMessages[class.Code()]
		if !ok {
			msg = "This breaks a rule: " + class.Code() + "."
		}
		var aerr *flagstore.ApprovalError
		if errors.As(err, &aerr) && approvalWords[aerr.Of] != "" {
			msg = fmt.Sprintf(approvalWords[aerr.Of], aerr.Env)
		}
		return pageError{class.Status, "Not possible", msg}
	}
	if w, ok := classWords[class.Code()]; ok {
		return pageError{class.Status, w[0], w[1]}
	}
	switch {
	case errors.Is(err, errCSRF):
		return pageError{http.StatusForbidden, "Form expired", "This form has expired or did not come from this site. Reload the page and try again."}
	case errors.Is(err, httpx.ErrBusy):
		return pageError{http.StatusServiceUnavailable, "Busy", "Bunting is busy with many requests right now. Try again in a moment."}
	case errors.Is(err, errNoOrganization):
		return pageError{http.StatusForbidden, "No organization", "Your account does not belong to any organization yet. Ask an administrator to add you."}
	}
	// HTTP's own errors (an unknown route, a wrong method, a body too large).
	if class, ok := httpx.Classify(err); ok && class.Status < http.StatusInternalServerError {
		w, ok := classWords[class.Code()]
		if !ok {
			w = [2]string{"Invalid request", "Bunting could not understand this request."}
		}
		return pageError{class.Status, w[0], w[1]}
	}
	return pageError{http.StatusInternalServerError, "Something went wrong", "Bunting could not finish this request. Try again; if it keeps failing, tell your administrator."}
}

// writeError answers a failed page request: a lost session goes to sign-in,
// htmx gets the message in the page's message region, anything else a page
// of its own. Unexpected errors are logged here, once, and never shown.
func (p *pages) writeError(c echo.Context, err error) {
	if c.Response().Committed {
		return
	}
	if errors.Is(err, core.ErrUnauthenticated) {
		if err := p.toLogin(c); err != nil {
			p.log.DebugContext(c.Request().Context(), "redirect to sign-in", "err", err)
		}
		return
	}
	e := explain(httpx.ClientGone(c, err))
	requestID := c.Response().Header().Get(echo.HeaderXRequestID)
	if e.status >= http.StatusInternalServerError {
		p.log.ErrorContext(c.Request().Context(), "page failed", "err", err, "request_id", requestID)
		e.text += " (Reference " + requestID + ")"
	}
	var answer error
	if isHTMX(c) {
		// The main swap is skipped; the message lands out of band in #flash.
		c.Response().Header().Set("HX-Reswap", "none")
		answer = render(c, e.status, views.ErrorFlash(e.heading+": "+e.text))
	} else {
		answer = render(c, e.status, views.ErrorPageView(views.ErrorPage{
			Doc:    views.Doc{Title: e.heading, Assets: p.assets.views()},
			Status: e.status, Heading: e.heading, Text: e.text, HomeHref: "/", Home: "Back to Bunting",
		}))
	}
	if answer != nil {
		p.log.DebugContext(c.Request().Context(), "write error page", "err", answer)
	}
}

// placeNames are the parts of a problem's path in words.
var placeNames = map[string]string{"rules": "Rule", "conditions": "condition", "variations": "Variation",
	"targetUsers": views.PartTargets.Label, "keyIds": "user", "fallthrough": views.PartDefault.Label, "value": "value",
	"property": "attribute", "name": "name", "dispatchKey": "split attribute", "variationId": "variation", "id": "id",
	"approvalsRequired": "Approvals needed", "approverMemberIds": "Approvers", "approverGroupIds": "Approver groups",
	"reason": "Reason", "reviewers": "Reviewers"}

// placeWords says where a problem's path points: "rules[1].conditions[0].value"
// is "Rule 2, condition 1, value".
func placeWords(path string) string {
	var parts []string
	for _, part := range strings.Split(path, ".") {
		name, index, indexed := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		words := placeNames[name]
		if words == "" {
			words = name
		}
		if n, err := strconv.Atoi(index); indexed && err == nil {
			words += " " + strconv.Itoa(n+1)
		}
		parts = append(parts, words)
	}
	return strings.Join(parts, ", ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
