package web

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx"
)

// A page whose right does not depend on what its form says checks that
// right before the form is read: the route table (pages.go) puts the check
// between the session and the CSRF guard, which parses the whole form for
// its token. A caller without the right is answered 403 with no byte of the
// body read and nothing of the body budget taken. Each check is the store's
// (the same check the operation makes first; it still makes it).

// Each check below turns one of the store's Authorize methods into a
// route's check, asked with what the request names.

// actorRight checks a right of the caller alone.
func actorRight(authorize func(*core.Actor) error) func(echo.Context) error {
	return func(c echo.Context) error { return authorize(actor(c)) }
}

// orgRight checks a right the store reads the organization for.
func orgRight(authorize func(context.Context, *core.Actor) error) func(echo.Context) error {
	return func(c echo.Context) error { return authorize(c.Request().Context(), actor(c)) }
}

// pathIDRight checks a right on the id the path names under name.
func (p *pages) pathIDRight(name string, authorize func(context.Context, *core.Actor, uuid.UUID) error) func(echo.Context) error {
	return func(c echo.Context) error { return p.withID(c, name, authorize) }
}

// projectEnvRight checks a right on the project's environment the path
// names.
func (p *pages) projectEnvRight(authorize func(context.Context, *core.Actor, uuid.UUID, uuid.UUID) error) func(echo.Context) error {
	return func(c echo.Context) error { return p.inProjectEnv(c, authorize) }
}

// workEnvRight checks a right in the working environment. The flag and
// segment pages work there (workenv.go), which the session chose before the
// form is read.
func (p *pages) workEnvRight(authorize func(context.Context, *core.Actor, uuid.UUID) error) func(echo.Context) error {
	return func(c echo.Context) error { return p.inWorkEnv(c, authorize) }
}

// withID runs a check on the id the path names under name.
func (p *pages) withID(c echo.Context, name string, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	id, err := httpx.PathID(c, name)
	if err != nil {
		return err
	}
	return check(c.Request().Context(), actor(c), id)
}

// inProjectEnv runs a check on the project's environment the path names.
func (p *pages) inProjectEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID, uuid.UUID) error) error {
	projectID, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	envID, err := httpx.PathID(c, "envId")
	if err != nil {
		return err
	}
	return check(c.Request().Context(), actor(c), projectID, envID)
}

// inWorkEnv runs a check on the working environment; someone who can open
// none may create nothing (actingEnv).
func (p *pages) inWorkEnv(c echo.Context, check func(context.Context, *core.Actor, uuid.UUID) error) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	// The operation loads the environment again: from memory.
	r := c.Request()
	ctx := core.RememberEnvironment(r.Context())
	c.SetRequest(r.WithContext(ctx))
	return check(ctx, actor(c), w.id)
}
