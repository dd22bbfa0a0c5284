package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// comparesChanges checks, before the body is read, that the caller may read
// the environment: comparing needs nothing more, whatever the body says.
func (h *Handler) comparesChanges(c echo.Context) error {
	return h.inEnv(c, h.store.Flags().AuthorizeAuditCompare)
}

// compareChange is FeatBit's POST audit-logs/compare: the instructions
// between a flag or segment before and after an edit, which FeatBit's Save
// dialog lists, enabling Save only when there are some.
func (h *Handler) compareChange(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in flagstore.CompareInput
	if err := bind(c, &in); err != nil {
		return err
	}
	out, err := h.store.Flags().CompareChange(c.Request().Context(), actor(c), ids.Env, in)
	return respond(c, out, err)
}
