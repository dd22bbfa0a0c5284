package api

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

func (h *Handler) listFlags(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		enabled, err := queryOptionalBool(c, "isEnabled")
		if err != nil {
			return nil, err
		}
		archived, err := queryBool(c, "isArchived")
		if err != nil {
			return nil, err
		}
		return h.store.Flags().ListFlags(ctx, a, ids.Env, flagstore.FlagFilter{
			Name: query(c, "name"), Tags: queryList(c, "tags"), IsEnabled: enabled, IsArchived: archived,
			SortBy: query(c, "sortBy"), Order: query(c, "sortOrder"), Page: page(c), Stage: query(c, "stage")})
	})
}

func (h *Handler) createFlag(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in flagstore.FlagInput
	if err := bind(c, &in); err != nil {
		return err
	}
	// Where the environment's changes need approval, the flag comes in
	// pending and the answer names its change request (pendingApproval).
	f, err := h.store.Flags().CreateFlagRequesting(c.Request().Context(), actor(c), ids.Env, in)
	return respond(c, f, err)
}

func (h *Handler) getFlag(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f, err := h.store.SDK().GetFlagJSON(c.Request().Context(), actor(c), ids.Env, c.Param("key"))
	return respondJSON(c, f, err)
}

func (h *Handler) flagTags(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Flags().FlagTags(ctx, a, ids.Env)
	})
}

func (h *Handler) flagKeyUsed(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Flags().FlagKeyUsed(ctx, a, ids.Env, query(c, "key"))
	})
}

func (h *Handler) flagRevisions(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Flags().ListFlagRevisions(ctx, a, ids.Env, c.Param("key"), page(c))
	})
}

// flagChange decodes a flag change's body and applies it with do.
func flagChange[In any, Out any](c echo.Context, do func(*core.Actor, uuid.UUID, string, In) (Out, error)) error {
	return answerBody(c, func(_ context.Context, a *core.Actor, ids routeIDs, in In) (any, error) {
		return do(a, ids.Env, c.Param("key"), in)
	})
}

// Flag changes answer what FeatBit's do: the new revision (the current one
// when nothing changed) for toggle, name, description, variations,
// off-variation and targeting; true for archive, restore, delete, tags,
// clone and PATCH.

// revision answers a changed flag's revision.
func revision(f flagstore.Flag, err error) (uuid.UUID, error) { return f.Revision, err }

// done answers true for a change that succeeded.
func done[T any](_ T, err error) (bool, error) { return true, err }

func (h *Handler) updateFlagDescription(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.DescriptionInput) (uuid.UUID, error) {
		return h.store.Flags().UpdateFlagDescription(c.Request().Context(), a, envID, key, in)
	})
}

func (h *Handler) toggleFlag(c echo.Context) error {
	// FeatBit binds the status as a .NET bool: true or false in any letter case.
	var on bool
	switch strings.ToLower(c.Param("status")) {
	case "true":
		on = true
	case "false":
	default:
		return core.ErrNotFound
	}
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.Change) (uuid.UUID, error) {
		return revision(h.store.Flags().ToggleFlag(c.Request().Context(), a, envID, key, on, in))
	})
}

func (h *Handler) archiveFlag(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.Change) (bool, error) {
		return done(h.store.Flags().ArchiveFlag(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) restoreFlag(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.Change) (bool, error) {
		return done(h.store.Flags().RestoreFlag(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) deleteFlag(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.Change) (bool, error) {
		return true, h.store.Flags().DeleteFlag(c.Request().Context(), a, envID, key, in)
	})
}

func (h *Handler) renameFlag(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.FlagNameInput) (uuid.UUID, error) {
		return revision(h.store.Flags().RenameFlag(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) setFlagTags(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.TagsInput) (bool, error) {
		return done(h.store.Flags().SetFlagTags(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) setFlagVariations(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.VariationsInput) (uuid.UUID, error) {
		return revision(h.store.Flags().SetFlagVariations(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) setFlagOffVariation(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.OffVariationInput) (uuid.UUID, error) {
		return revision(h.store.Flags().SetFlagOffVariation(c.Request().Context(), a, envID, key, in))
	})
}

func (h *Handler) setFlagTargeting(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.TargetingInput) (uuid.UUID, error) {
		return revision(h.store.Flags().SetFlagTargeting(c.Request().Context(), a, envID, key, in))
	})
}

// cloneFlag answers true, as FeatBit does; where the environment's changes
// need approval, the clone comes in pending and the answer is the clone
// with its change request (pendingApproval), as creating a flag answers.
func (h *Handler) cloneFlag(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in flagstore.CloneFlagInput) (any, error) {
		out, err := h.store.Flags().CloneFlagRequesting(c.Request().Context(), a, envID, key, in)
		if err != nil || out.PendingApproval == nil {
			return done(out, err)
		}
		return out, nil
	})
}

func (h *Handler) patchFlag(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	ops, err := rawBody(c)
	if err != nil {
		return err
	}
	_, err = h.store.Flags().PatchFlag(c.Request().Context(), actor(c), ids.Env, c.Param("key"), ops)
	return respond(c, true, err)
}

// flagPendingChanges answers a flag's pending changes: FeatBit's
// PendingChangesVm for each scheduled change not yet applied or cancelled.
func (h *Handler) flagPendingChanges(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Governance().FlagPendingChanges(ctx, a, ids.Env, c.Param("key"))
	})
}

// createFlagSchedule schedules a change to a flag: FeatBit answers true.
func (h *Handler) createFlagSchedule(c echo.Context) error {
	return flagChange(c, func(a *core.Actor, envID uuid.UUID, key string, in governance.ScheduleInput) (bool, error) {
		return done(h.store.Governance().CreateFlagSchedule(c.Request().Context(), a, envID, key, in))
	})
}

// deleteFlagSchedule cancels a scheduled change: FeatBit answers true.
func (h *Handler) deleteFlagSchedule(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Governance().CancelFlagSchedule(ctx, a, ids.Env, ids.ID)
	})
}
