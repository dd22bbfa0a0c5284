package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/views"
)

// Reference types of the audit entries these pages show.
const (
	refFlag    = "FeatureFlag"
	refSegment = "Segment"
)

// dateLayout is how date fields send dates.
const dateLayout = "2006-01-02"

// history loads one page ("page" in the URL, from 1) of the working
// environment's changes selected by filter. base is the address the pager
// adds its page to; region the id of the element paging replaces.
func (p *pages) history(c echo.Context, w workEnv, filter flagstore.AuditFilter, base, region string) (views.History, error) {
	number := pageNumber(c.QueryParam("page"))
	filter.Page = core.Page{Index: number - 1, Size: listPageSize}
	list, err := p.store.Flags().ListAuditLogs(c.Request().Context(), actor(c), w.id, filter)
	if err != nil {
		return views.History{}, err
	}
	h := views.History{Region: region, Empty: "No changes recorded yet.",
		Pager: pager(list.TotalCount, number, listPageSize, "change", "changes", func(n int) string { return withPage(base, n) })}
	subjects := filter.RefID == "" // the audit log names what changed; a flag's history need not
	var ids []string
	for _, e := range list.Items {
		ids = append(ids, describe.SegmentIDs(e.RefType, e.DataChange.Previous, e.DataChange.Current)...)
	}
	names, err := p.segmentNames(c, w, ids)
	if err != nil {
		return views.History{}, err
	}
	for _, e := range list.Items {
		h.Entries = append(h.Entries, historyEntry(e, subjects, names))
	}
	return h, nil
}

// segmentNames looks up, in one query, the names of the segments that rules
// name (in a flag, or a page of history), so their sentences say names.
func (p *pages) segmentNames(c echo.Context, w workEnv, named []string) (describe.Names, error) {
	var ids []string
	for _, id := range named {
		if _, err := uuid.Parse(id); err == nil && !slices.Contains(ids, id) && len(ids) < segments.MaxSegmentIDs {
			ids = append(ids, id)
		}
	}
	names := map[string]string{}
	if len(ids) > 0 {
		segments, err := p.store.Segments().SegmentsByIDs(c.Request().Context(), actor(c), w.id, ids)
		if err != nil {
			return nil, err
		}
		for _, sg := range segments {
			names[sg.ID.String()] = sg.Name
		}
	}
	return func(id string) (string, bool) { name, ok := names[id]; return name, ok }, nil
}

// withPage adds a page number to an address.
func withPage(base string, page int) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	q.Del("page")
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// operationWords names a history operation as the page shows it: FeatBit's
// names for changes applied from a draft are run together.
func operationWords(op string) string {
	switch op {
	case flagstore.OpApplyFlagSchedule:
		return "Scheduled update"
	case flagstore.OpApplyFlagChangeRequest:
		return "Approved update"
	}
	return op
}

// historyEntry shows one recorded change, with how it changed field by field.
func historyEntry(e flagstore.AuditEntry, subject bool, segments describe.Names) views.HistoryEntry {
	h := views.HistoryEntry{When: when(e.CreatedAt), Who: e.CreatorName, Operation: operationWords(e.Operation), Comment: e.Comment,
		Lines:   describe.Change(e.RefType, e.DataChange.Previous, e.DataChange.Current, segments),
		Changes: fieldChanges(e.DataChange.Previous, e.DataChange.Current)}
	if e.CreatorEmail != "" && e.CreatorEmail != e.CreatorName {
		h.Who += " (" + e.CreatorEmail + ")"
	}
	names := make([]string, len(h.Changes))
	for i, ch := range h.Changes {
		names[i] = ch.Field
	}
	switch e.Operation {
	case core.OpCreate:
		h.Summary = "Show what was created (JSON)"
	case core.OpRemove:
		h.Summary = "Show what was deleted (JSON)"
	default:
		h.Summary = "Show JSON changes: " + strings.Join(names, ", ")
	}
	if subject {
		switch e.RefType {
		case refFlag:
			key, name, _ := strings.Cut(e.Keyword, ",")
			h.Kind, h.Name = views.RefKindOf(refFlag).Label, name
			if e.SubjectExists {
				h.Href = flagHref(key)
			}
		case refSegment:
			h.Kind, h.Name = views.RefKindOf(refSegment).Label, e.Keyword
			if e.SubjectExists {
				h.Href = segmentHref(e.RefID)
			}
		case "FlagChangeRequest", "FlagSchedule", "FlagTrigger":
			// Recorded as "flag key,title": what it is about, on which flag.
			key, title, _ := strings.Cut(e.Keyword, ",")
			h.Kind, h.Name = views.RefKindOf(e.RefType).Label, key
			if title != "" {
				h.Name = "“" + title + "” on " + key
			}
		default:
			h.Kind, h.Name = views.RefKindOf(e.RefType).Label, e.Keyword
		}
		if !e.SubjectExists {
			h.Name += " (deleted)"
		}
	}
	return h
}

// auditLog shows the working environment's history with filters: type,
// text (part of a name, key or comment) and dates (whole days, UTC).
func (p *pages) auditLog(c echo.Context) error {
	w, ok := workEnvOf(c)
	q := c.QueryParams()
	form := p.form(c, "audit", "/audit-log", map[string]string{"type": q.Get("type"), "q": q.Get("q"),
		"from": q.Get("from"), "to": q.Get("to")})
	form.Errors = map[string]string{}
	vm := views.AuditLog{Env: w.view(ok), Filter: form, Types: []views.Option{{Value: "", Label: "All changes", Selected: q.Get("type") == ""}}}
	for _, t := range flagstore.EnvAuditRefTypes {
		vm.Types = append(vm.Types, views.Option{Value: t, Label: views.RefKindOf(t).Plural, Selected: q.Get("type") == t})
	}
	status := http.StatusOK
	if ok {
		filter := flagstore.AuditFilter{RefType: q.Get("type"), Query: q.Get("q")}
		for _, d := range []struct {
			name string
			dst  **time.Time
			end  bool
		}{{"from", &filter.From, false}, {"to", &filter.To, true}} {
			v := strings.TrimSpace(q.Get(d.name))
			if v == "" {
				continue
			}
			day, err := time.Parse(dateLayout, v)
			if err != nil {
				vm.Filter.Errors[d.name] = "Enter a date like 2025-01-31."
				continue
			}
			if d.end { // "to" includes the whole day
				day = day.Add(24*time.Hour - time.Nanosecond)
			}
			*d.dst = &day
		}
		if len(vm.Filter.Errors) > 0 {
			status = http.StatusBadRequest
			vm.History = views.History{Region: "history", Empty: "Enter the dates as 2025-01-31 to filter by them."}
		} else {
			base := url.Values{}
			for _, name := range []string{"type", "q", "from", "to"} {
				if v := q.Get(name); v != "" {
					base.Set(name, v)
				}
			}
			var err error
			if vm.History, err = p.history(c, w, filter, "/audit-log?"+base.Encode(), "history"); err != nil {
				return err
			}
			if len(base) > 0 {
				vm.History.Empty = "No changes match."
			}
		}
	}
	return p.respond(c, status, "Audit log", navAuditLog, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.AuditLogPage(vm)
	}, views.HistoryView(vm.History))
}
