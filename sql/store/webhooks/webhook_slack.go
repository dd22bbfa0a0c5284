package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// The Slack format: a webhook whose payloadTemplateType is "slack" is sent
// {"text": "..."}, the body of a Slack incoming webhook (which Mattermost's
// and other chat tools' incoming webhooks also take), saying the change in
// a sentence with a link to it, instead of FeatBit's data object.

// changeRequestEvents says which event a step of a change request is, from
// its audit records (changeRequestRecord): made, or its status moved.
func changeRequestEvents(ch core.Change) []string {
	b, _ := ch.Previous.(*flagstore.ChangeRequestRecord)
	a, _ := ch.Current.(*flagstore.ChangeRequestRecord)
	switch {
	case a == nil:
		return nil // withdrawn
	case b == nil:
		return []string{flagstore.EventChangeRequestCreated}
	case b.Status == a.Status:
		return nil // a review that did not settle it
	}
	switch a.Status {
	case flagstore.ChangeRequestApproved:
		return []string{flagstore.EventChangeRequestApproved}
	case flagstore.ChangeRequestDeclined:
		return []string{flagstore.EventChangeRequestDeclined}
	case flagstore.ChangeRequestApplied:
		return []string{flagstore.EventChangeRequestApplied}
	}
	return nil
}

// slackBody is the {"text": ...} of a change for a Slack-format webhook.
func (s *Webhooks) slackBody(ctx context.Context, q *db.Queries, a *core.Actor, ch core.Change, res *db.WebhookResourceRow) ([]byte, error) {
	text, err := s.slackText(ctx, q, a, ch, res)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"text": text})
}

// slackText says a change in one sentence, with a link to what changed:
// "Ana asked to turn on New checkout in Web / Production — review: <link>".
func (s *Webhooks) slackText(ctx context.Context, q *db.Queries, a *core.Actor, ch core.Change, res *db.WebhookResourceRow) (string, error) {
	who := operatorName(ctx, q, a)
	if who == "" {
		who = "Someone"
	}
	where := ""
	if res != nil {
		where = " in " + res.ProjectName + " / " + res.EnvName
	}
	noNames := func(string) (string, bool) { return "", false }
	switch ch.RefType {
	case "FeatureFlag":
		b, _ := ch.Previous.(*flagstore.Flag)
		f, _ := ch.Current.(*flagstore.Flag)
		lines := describe.FlagChange(b, f, noNames)
		if f == nil {
			return fmt.Sprintf("%s deleted the flag %s%s", who, b.Name, where), nil
		}
		link := s.link("/flags/" + url.PathEscape(f.Key))
		if b == nil {
			return fmt.Sprintf("%s created the flag %s%s: %s", who, f.Name, where, link), nil
		}
		return fmt.Sprintf("%s changed %s%s: %s — %s", who, f.Name, where, sentences(lines), link), nil
	case "Segment":
		b, _ := ch.Previous.(*flagstore.Segment)
		sg, _ := ch.Current.(*flagstore.Segment)
		if sg == nil {
			return fmt.Sprintf("%s deleted the segment %s%s", who, b.Name, where), nil
		}
		link := s.link("/segments/" + sg.ID.String())
		if b == nil {
			return fmt.Sprintf("%s created the segment %s%s: %s", who, sg.Name, where, link), nil
		}
		return fmt.Sprintf("%s changed the segment %s%s: %s — %s", who, sg.Name, where,
			sentences(describe.SegmentChange(b, sg, noNames)), link), nil
	case "FlagChangeRequest":
		return s.changeRequestText(ctx, q, who, where, ch)
	}
	return who + " changed something" + where, nil
}

// changeRequestText says a step of a change request, with the link to it.
func (s *Webhooks) changeRequestText(ctx context.Context, q *db.Queries, who, where string, ch core.Change) (string, error) {
	id, err := uuid.Parse(ch.RefID)
	if err != nil || ch.EnvID == nil {
		return "", fmt.Errorf("a change request's webhook without its id or environment")
	}
	cr, err := s.flags.ChangeRequest(ctx, q, *ch.EnvID, id)
	if err != nil {
		return "", err
	}
	var flag struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(cr.DataChange.Current, &flag)
	if flag.Name == "" {
		flag.Name = cr.FlagKey
	}
	link := s.link("/reviews/" + cr.ID.String())
	after, _ := ch.Current.(*flagstore.ChangeRequestRecord)
	status := ""
	if after != nil {
		status = after.Status
	}
	switch status {
	case flagstore.ChangeRequestApproved:
		return fmt.Sprintf("%s approved the change to %s%s: %s", who, flag.Name, where, link), nil
	case flagstore.ChangeRequestDeclined:
		return fmt.Sprintf("%s declined the change to %s%s: %s", who, flag.Name, where, link), nil
	case flagstore.ChangeRequestApplied:
		return fmt.Sprintf("%s applied the change to %s%s: %s", who, flag.Name, where, link), nil
	}
	lines := describe.Change(refFlagType, cr.DataChange.Previous, cr.DataChange.Current, func(string) (string, bool) { return "", false })
	what := "change " + flag.Name + where + ": " + sentences(lines)
	switch {
	case len(lines) == 1 && lines[0] == "Turned the flag on":
		what = "turn on " + flag.Name + where
	case len(lines) == 1 && lines[0] == "Turned the flag off":
		what = "turn off " + flag.Name + where
	}
	text := fmt.Sprintf("%s asked to %s — review: %s", who, what, link)
	if cr.Reason != "" {
		text += "\nReason: " + cr.Reason
	}
	return text, nil
}

// refFlagType is the reference type of a flag's changes.
const refFlagType = "FeatureFlag"

// sentences joins a change's lines into one sentence each.
func sentences(lines []string) string {
	if len(lines) == 0 {
		return "no visible change"
	}
	return strings.Join(lines, "; ")
}

// link is a page's address: absolute when the base URL is known.
func (s *Webhooks) link(path string) string { return s.core.BaseURL + path }
