package api

import (
	"errors"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/web/httpx"
)

// FeatBit's compare and copy routes: the source environment is the path's
// envId, the target is targetEnvId.

// envAndTarget reads the source and target environment ids of the path.
func envAndTarget(c echo.Context) (uuid.UUID, uuid.UUID, error) {
	return pathIDs(c, "envId", "targetEnvId")
}

func (h *Handler) compareOverview(c echo.Context) error {
	envID, err := httpx.PathID(c, "envId")
	if err != nil {
		return err
	}
	var in flagcopy.CompareOverviewInput
	if err := bind(c, &in); err != nil {
		return err
	}
	out, err := h.store.FlagCopy().CompareOverview(c.Request().Context(), actor(c), envID, in)
	return respond(c, out, err)
}

func (h *Handler) compareFlag(c echo.Context) error {
	envID, targetID, err := envAndTarget(c)
	if err != nil {
		return err
	}
	out, err := h.store.FlagCopy().CompareFlag(c.Request().Context(), actor(c), envID, c.Param("key"), targetID)
	if errors.Is(err, flagcopy.ErrNotInTarget) {
		return respond(c, out, nil) // FeatBit answers null
	}
	return respond(c, out, err)
}

func (h *Handler) copyToEnvPrecheck(c echo.Context) error {
	envID, targetID, err := envAndTarget(c)
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	if err := bind(c, &ids); err != nil {
		return err
	}
	out, err := h.store.FlagCopy().CopyToEnvPrecheck(c.Request().Context(), actor(c), envID, targetID, ids)
	return respond(c, out, err)
}

func (h *Handler) copyToEnv(c echo.Context) error {
	envID, targetID, err := envAndTarget(c)
	if err != nil {
		return err
	}
	var in flagcopy.CopyToEnvInput
	if err := bind(c, &in); err != nil {
		return err
	}
	out, err := h.store.FlagCopy().CopyToEnv(c.Request().Context(), actor(c), envID, targetID, in)
	return respond(c, out, err)
}

func (h *Handler) copyFlagSettings(c echo.Context) error {
	envID, targetID, err := envAndTarget(c)
	if err != nil {
		return err
	}
	var in flagcopy.CopyFlagSettingsInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// FeatBit answers true.
	out, err := done(h.store.FlagCopy().CopyFlagSettings(c.Request().Context(), actor(c), envID, c.Param("key"), targetID, in))
	return respond(c, out, err)
}
