package web

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/views"
)

// workEnv is the environment the flag and segment pages work in: the one the
// context switcher has chosen.
type workEnv struct {
	id                      uuid.UUID
	projectKey, projectName string
	key, name               string
	requireComment          bool
	// approvals is how many approvals a change to what a flag serves
	// needs; 0 when changes need none.
	approvals int
}

func (w workEnv) view(ok bool) views.WorkEnv {
	return views.WorkEnv{Project: w.projectName, Name: w.name, RequireComment: w.requireComment, Missing: !ok, ProjectsHref: "/projects"}
}

// workEnvOf finds the working environment; ok is false when the person can
// open no environment at all.
func (p *pages) workEnvOf(c echo.Context) (w workEnv, ok bool, err error) {
	wp, err := p.workplace(c)
	if err != nil || wp.Env == nil {
		return workEnv{}, false, err
	}
	pr, e := wp.Project, wp.Env
	return workEnv{id: e.ID, projectKey: pr.Key, projectName: pr.Name, key: e.Key, name: e.Name,
		requireComment: e.Settings.RequireChangeComment, approvals: approvalsOf(e.Settings)}, true, nil
}

// actingEnv is the working environment of a flag's or a segment's page or
// change. Someone who can open no environment may change nothing: 403.
func (p *pages) actingEnv(c echo.Context) (workEnv, error) {
	w, ok, err := p.workEnvOf(c)
	if err == nil && !ok {
		err = store.ErrForbidden
	}
	return w, err
}

// approvalsOf is how many approvals an environment's changes need, 0 for none.
func approvalsOf(st store.EnvSettings) int {
	if cr := st.ChangeRequest; cr != nil && cr.IsEnabled {
		return cr.ApprovalsRequired
	}
	return 0
}
