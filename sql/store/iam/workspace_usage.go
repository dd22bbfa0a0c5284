package iam

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// A workspace's usage, in the shape of FeatBit's WorkspaceUsageVm (the
// workspace page's "Usage" tab), from what Bunting records:
//   - end users: when each was first seen (created_at) and last seen
//     (updated_at). A user counts as active in a period when that span
//     overlaps it, and as new on the day it was first seen.
//   - flag evaluations: each flag variation's running total with its first
//     and last evaluation, no count per day. An evaluation total counts for a
//     day only when the whole span lies on that day, so every evaluation
//     reported surely happened then: the numbers are lower bounds.
//   - custom metrics: Bunting has none (no experiments); always 0.

// UsageFilter is FeatBit's WorkspaceUsageFilter: two periods of whole UTC
// days, given as yyyy-mm-dd, both ends included. The previous period is
// optional; without it, it is the period of the same length just before.
type UsageFilter struct {
	StartDate, EndDate, PrevStartDate, PrevEndDate string
}

// WorkspaceUsage is FeatBit's WorkspaceUsageVm.
type WorkspaceUsage struct {
	Summary           UsageSummary       `json:"summary"`
	DailyTrend        []DailyUsage       `json:"dailyTrend"`
	EnvironmentUsages []EnvironmentUsage `json:"environmentUsages"`
}

// UsageSummary is FeatBit's UsageSummaryVm.
type UsageSummary struct {
	UniqueUsers          int64 `json:"uniqueUsers"`
	TotalFlagEvaluations int64 `json:"totalFlagEvaluations"`
	TotalCustomMetrics   int64 `json:"totalCustomMetrics"`
	PrevUniqueUsers      int64 `json:"prevUniqueUsers"`
	PrevFlagEvaluations  int64 `json:"prevFlagEvaluations"`
	PrevCustomMetrics    int64 `json:"prevCustomMetrics"`
}

// DailyUsage is FeatBit's DailyTrendItemVm; Date is yyyy-mm-dd.
type DailyUsage struct {
	Date            string `json:"date"`
	NewUsers        int64  `json:"newUsers"`
	FlagEvaluations int64  `json:"flagEvaluations"`
	CustomMetrics   int64  `json:"customMetrics"`
}

// EnvironmentUsage is FeatBit's EnvironmentUsageVm.
type EnvironmentUsage struct {
	OrgName         string    `json:"orgName"`
	ProjectName     string    `json:"projectName"`
	EnvName         string    `json:"envName"`
	EnvID           uuid.UUID `json:"envId"`
	UniqueUsers     int64     `json:"uniqueUsers"`
	FlagEvaluations int64     `json:"flagEvaluations"`
	CustomMetrics   int64     `json:"customMetrics"`
}

// maxUsageDays bounds a period: a daily trend of at most a year.
const maxUsageDays = 366

// usagePeriod is [since, until) of whole UTC days.
type usagePeriod struct{ since, until time.Time }

// WorkspaceUsage reports the current workspace's usage in every
// organization, so it needs what changing the workspace needs
// (UpdateWorkspaceGeneralSettings, as requireWorkspaceRight decides; FeatBit
// checks nothing).
func (s *IAM) WorkspaceUsage(ctx context.Context, a *core.Actor, f UsageFilter) (WorkspaceUsage, error) {
	wsID, err := a.Workspace()
	if err != nil {
		return WorkspaceUsage{}, err
	}
	ws, err := s.core.Q.GetWorkspace(ctx, wsID)
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	if err := s.core.RequireWorkspaceRight(ctx, a, access.UpdateWorkspaceGeneralSettings, ws); err != nil {
		return WorkspaceUsage{}, err
	}
	cur, prev, err := f.periods()
	if err != nil {
		return WorkspaceUsage{}, err
	}

	out := WorkspaceUsage{DailyTrend: []DailyUsage{}, EnvironmentUsages: []EnvironmentUsage{}}
	days := map[string]*DailyUsage{}
	for d := cur.since; d.Before(cur.until); d = d.AddDate(0, 0, 1) {
		out.DailyTrend = append(out.DailyTrend, DailyUsage{Date: d.Format(time.DateOnly)})
	}
	for i := range out.DailyTrend {
		days[out.DailyTrend[i].Date] = &out.DailyTrend[i]
	}

	users, err := s.core.Q.WorkspaceEndUserUsage(ctx, db.WorkspaceEndUserUsageParams{WorkspaceID: wsID, Since: cur.since, Until: cur.until})
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	envs := map[uuid.UUID]*EnvironmentUsage{}
	for _, u := range users {
		out.EnvironmentUsages = append(out.EnvironmentUsages, EnvironmentUsage{OrgName: u.OrgName, ProjectName: u.ProjectName,
			EnvName: u.EnvName, EnvID: u.EnvID, UniqueUsers: u.UniqueUsers})
		out.Summary.UniqueUsers += u.UniqueUsers
	}
	for i := range out.EnvironmentUsages {
		envs[out.EnvironmentUsages[i].EnvID] = &out.EnvironmentUsages[i]
	}
	newUsers, err := s.core.Q.WorkspaceNewUsersByDay(ctx, db.WorkspaceNewUsersByDayParams{WorkspaceID: wsID, Since: cur.since, Until: cur.until})
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	for _, n := range newUsers {
		if d, ok := days[n.Day.Time.Format(time.DateOnly)]; ok {
			d.NewUsers = n.NewUsers
		}
	}
	evals, err := s.core.Q.WorkspaceEvaluationUsage(ctx, db.WorkspaceEvaluationUsageParams{WorkspaceID: wsID, Since: cur.since, Until: cur.until})
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	for _, e := range evals {
		out.Summary.TotalFlagEvaluations += e.Evaluations
		if d, ok := days[e.Day.Time.Format(time.DateOnly)]; ok {
			d.FlagEvaluations += e.Evaluations
		}
		if env, ok := envs[e.EnvID]; ok {
			env.FlagEvaluations += e.Evaluations
		}
	}

	prevUsers, err := s.core.Q.WorkspaceEndUserUsage(ctx, db.WorkspaceEndUserUsageParams{WorkspaceID: wsID, Since: prev.since, Until: prev.until})
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	for _, u := range prevUsers {
		out.Summary.PrevUniqueUsers += u.UniqueUsers
	}
	prevEvals, err := s.core.Q.WorkspaceEvaluationUsage(ctx, db.WorkspaceEvaluationUsageParams{WorkspaceID: wsID, Since: prev.since, Until: prev.until})
	if err != nil {
		return WorkspaceUsage{}, core.Translate(err)
	}
	for _, e := range prevEvals {
		out.Summary.PrevFlagEvaluations += e.Evaluations
	}
	return out, nil
}

// periods checks the filter and returns its two periods.
func (f UsageFilter) periods() (cur, prev usagePeriod, err error) {
	var v core.Validator
	cur = f.period(&v, "startDate", f.StartDate, "endDate", f.EndDate)
	if f.PrevStartDate == "" && f.PrevEndDate == "" {
		if err := v.Err(); err != nil {
			return cur, prev, err
		}
		length := cur.until.Sub(cur.since)
		return cur, usagePeriod{since: cur.since.Add(-length), until: cur.since}, nil
	}
	prev = f.period(&v, "prevStartDate", f.PrevStartDate, "prevEndDate", f.PrevEndDate)
	return cur, prev, v.Err()
}

// period reads one period: both dates required, the end not before the
// start, at most maxUsageDays days.
func (UsageFilter) period(v *core.Validator, startName, start, endName, end string) usagePeriod {
	day := func(name, value string) (time.Time, bool) {
		if value == "" {
			v.Add(name, "required")
			return time.Time{}, false
		}
		t, err := time.Parse(time.DateOnly, value)
		if err != nil {
			v.Add(name, "invalid")
			return time.Time{}, false
		}
		return t, true
	}
	since, okStart := day(startName, start)
	last, okEnd := day(endName, end)
	if !okStart || !okEnd {
		return usagePeriod{}
	}
	until := last.AddDate(0, 0, 1)
	if !until.After(since) || until.Sub(since) > maxUsageDays*24*time.Hour {
		v.Add(endName, "invalid")
		return usagePeriod{}
	}
	return usagePeriod{since: since, until: until}
}
