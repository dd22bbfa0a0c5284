package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

func (h *Handler) listWebhooks(c echo.Context) error {
	hooks, err := h.store.Webhooks().ListWebhooks(c.Request().Context(), actor(c), webhooks.WebhookFilter{Name: query(c, "name"),
		ProjectID: query(c, "projectId"), EnvID: query(c, "envId"), Page: page(c)})
	return respond(c, hooks, err)
}

func (h *Handler) isWebhookNameUsed(c echo.Context) error {
	used, err := h.store.Webhooks().IsWebhookNameUsed(c.Request().Context(), actor(c), query(c, "name"))
	return respond(c, used, err)
}

func (h *Handler) getWebhook(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.Webhooks().GetWebhook(ctx, a, ids.ID)
	})
}

func (h *Handler) createWebhook(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in webhooks.WebhookInput) (any, error) {
		return h.store.Webhooks().CreateWebhook(ctx, a, in)
	})
}

func (h *Handler) updateWebhook(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in webhooks.WebhookInput) (any, error) {
		return h.store.Webhooks().UpdateWebhook(ctx, a, ids.ID, in)
	})
}

func (h *Handler) deleteWebhook(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return true, h.store.Webhooks().DeleteWebhook(ctx, a, ids.ID)
	})
}

func (h *Handler) sendWebhook(c echo.Context) error {
	var in webhooks.WebhookRequest
	if err := bind(c, &in); err != nil {
		return err
	}
	d, err := h.webhooks.Send(c.Request().Context(), actor(c), in)
	return respond(c, d, err)
}

func (h *Handler) listWebhookDeliveries(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	success, err := queryOptionalBool(c, "success")
	if err != nil {
		return err
	}
	notBefore, err := queryTime(c, "notBefore")
	if err != nil {
		return err
	}
	log, err := h.store.Webhooks().ListWebhookDeliveries(c.Request().Context(), actor(c), ids.ID,
		webhooks.WebhookDeliveryFilter{Event: query(c, "event"), Success: success, NotBefore: notBefore, Page: page(c)})
	return respond(c, log, err)
}
