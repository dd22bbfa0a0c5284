package web

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/workplace"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// place is where the signed-in person acts: their working environment and
// what they may do in the organization and there, as the store loaded it
// once for the request. A page read loads it as the session is resolved
// (signedIn); a post, when it first needs the environment: a change to a
// member or a group, answered with a redirect or with its lists, reads no
// environment at all. What the person may do in the organization, and
// where they chose to work, are known without it.
func place(c echo.Context) workplace.Place {
	rp := c.Get(placeKey).(*requestPlace)
	_ = rp.loaded() // actingEnv answers the error; a page drawn without the environment shows none
	return rp.pl
}

// requestPlace is the request's place, loaded once, when first needed.
type requestPlace struct {
	pl   workplace.Place
	load func() (workplace.Place, error) // nil once called
	err  error
}

func (rp *requestPlace) loaded() error {
	if rp.load != nil {
		pl, err := rp.load()
		rp.load, rp.err = nil, err
		if err == nil {
			rp.pl = pl
		}
	}
	return rp.err
}

// workEnv is the environment the flag and segment pages work in: the one
// the context switcher has chosen, from the request's place.
type workEnv struct {
	id                      uuid.UUID
	projectKey, projectName string
	key, name               string
	requireComment          bool
	// approvals is how many approvals a change to what a flag serves
	// needs; 0 when changes need none (the store's Place.Approvals).
	approvals int
	// rights are what the person may create in it and do to its flags.
	rights flagstore.EnvRights
}

func (w workEnv) view(ok bool) views.WorkEnv {
	return views.WorkEnv{Project: w.projectName, Name: w.name, RequireComment: w.requireComment, Missing: !ok, ProjectsHref: "/projects"}
}

// workEnvOf is the working environment; ok is false when the person can
// open no environment at all.
func workEnvOf(c echo.Context) (w workEnv, ok bool) {
	pl := place(c)
	if pl.Env == nil {
		return workEnv{}, false
	}
	pr, e := pl.Project, pl.Env
	return workEnv{id: e.ID, projectKey: pr.Key, projectName: pr.Name, key: e.Key, name: e.Name,
		requireComment: e.Settings.RequireChangeComment, approvals: pl.Approvals, rights: pl.EnvRights}, true
}

// actingEnv is the working environment of a flag's or a segment's page or
// change. Someone who can open no environment may change nothing: 403.
//
// The store's operations of the request then find the environment as the
// place loaded it, rather than reading it again.
func actingEnv(c echo.Context) (workEnv, error) {
	if err := c.Get(placeKey).(*requestPlace).loaded(); err != nil {
		return workEnv{}, err
	}
	w, ok := workEnvOf(c)
	if !ok {
		return w, core.ErrForbidden
	}
	r := c.Request()
	c.SetRequest(r.WithContext(place(c).InWorkingEnv(r.Context())))
	return w, nil
}

// actingEnvAndID is the working environment and the id the path names: what
// a change to one of its segments, experiments or metrics acts on.
func actingEnvAndID(c echo.Context) (workEnv, uuid.UUID, error) {
	w, err := actingEnv(c)
	if err != nil {
		return w, uuid.Nil, err
	}
	id, err := httpx.PathID(c, "id")
	return w, id, err
}

// inActingEnv is what the path's id names in the working environment, read
// with get (an experiment, a metric).
func inActingEnv[T any](c echo.Context, get func(context.Context, *core.Actor, uuid.UUID, uuid.UUID) (T, error)) (workEnv, T, error) {
	w, id, err := actingEnvAndID(c)
	if err != nil {
		var none T
		return w, none, err
	}
	x, err := get(c.Request().Context(), actor(c), w.id, id)
	return w, x, err
}
