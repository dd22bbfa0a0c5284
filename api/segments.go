package api

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

func (h *Handler) listSegments(c echo.Context) error {
	return answerList(c, func(ctx context.Context, a *core.Actor, ids routeIDs, q listQuery) (any, error) {
		return h.store.Segments().ListSegments(ctx, a, ids.Env, segments.SegmentFilter{Name: q.name, IsArchived: q.archived, Page: q.page})
	})
}

func (h *Handler) createSegment(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in segments.SegmentInput) (any, error) {
		return h.store.Segments().CreateSegment(ctx, a, ids.Env, in)
	})
}

func (h *Handler) segmentsByIDs(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	segments, err := h.store.SDK().SegmentsByIDsJSON(c.Request().Context(), actor(c), ids.Env, queryList(c, "ids"))
	return respondJSON(c, segments, err)
}

func (h *Handler) segmentTags(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Segments().SegmentTags(ctx, a, ids.Env)
	})
}

func (h *Handler) segmentKeyUsed(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Segments().SegmentKeyUsed(ctx, a, ids.Env, query(c, "key"), query(c, "type"))
	})
}

func (h *Handler) getSegment(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Segments().GetSegment(ctx, a, ids.Env, ids.Segment)
	})
}

func (h *Handler) segmentFlagReferences(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Segments().SegmentFlagReferences(ctx, a, ids.Env, ids.Segment)
	})
}

// segmentChange decodes a segment change's body and applies it with do.
// Every segment change answers true, as FeatBit's do.
func segmentChange[In any, Out any](c echo.Context, do func(*core.Actor, uuid.UUID, uuid.UUID, In) (Out, error)) error {
	return answerBody(c, func(_ context.Context, a *core.Actor, ids routeIDs, in In) (any, error) {
		return do(a, ids.Env, ids.Segment, in)
	})
}

func (h *Handler) archiveSegment(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in flagstore.Change) (bool, error) {
		_, err := h.store.Segments().ArchiveSegment(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) restoreSegment(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in flagstore.Change) (bool, error) {
		_, err := h.store.Segments().RestoreSegment(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) deleteSegment(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in flagstore.Change) (bool, error) {
		return true, h.store.Segments().DeleteSegment(c.Request().Context(), a, envID, id, in)
	})
}

func (h *Handler) renameSegment(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in segments.SegmentNameInput) (bool, error) {
		_, err := h.store.Segments().RenameSegment(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) setSegmentDescription(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in flagstore.DescriptionInput) (bool, error) {
		_, err := h.store.Segments().SetSegmentDescription(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) setSegmentTags(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in flagstore.TagsInput) (bool, error) {
		_, err := h.store.Segments().SetSegmentTags(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) setSegmentTargeting(c echo.Context) error {
	return segmentChange(c, func(a *core.Actor, envID, id uuid.UUID, in segments.SegmentTargetingInput) (bool, error) {
		_, err := h.store.Segments().SetSegmentTargeting(c.Request().Context(), a, envID, id, in)
		return true, err
	})
}

func (h *Handler) patchSegment(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	ops, err := rawBody(c)
	if err != nil {
		return err
	}
	_, err = h.store.Segments().PatchSegment(c.Request().Context(), actor(c), ids.Env, ids.Segment, ops)
	return respond(c, true, err)
}

func (h *Handler) listAuditLogs(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	from, err := queryTime(c, "from")
	if err != nil {
		return err
	}
	to, err := queryTime(c, "to")
	if err != nil {
		return err
	}
	creator, err := queryUUID(c, "creatorId")
	if err != nil {
		return err
	}
	cross, err := queryBool(c, "crossEnvironment")
	if err != nil {
		return err
	}
	logs, err := h.store.Flags().ListAuditLogs(c.Request().Context(), actor(c), ids.Env, flagstore.AuditFilter{
		RefType: query(c, "refType"), RefID: query(c, "refId"), Query: query(c, "query"), From: from, To: to,
		CreatorID: creator, CrossEnvironment: cross, Page: page(c)})
	return respond(c, logs, err)
}
