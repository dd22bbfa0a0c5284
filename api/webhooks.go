package api

import (
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/web/httpx"
)

func (h *Handler) listWebhooks(c echo.Context) error {
	hooks, err := h.store.Flags().ListWebhooks(c.Request().Context(), actor(c), flagstore.WebhookFilter{Name: query(c, "name"),
		ProjectID: query(c, "projectId"), EnvID: query(c, "envId"), Page: page(c)})
	return respond(c, hooks, err)
}

func (h *Handler) isWebhookNameUsed(c echo.Context) error {
	used, err := h.store.Flags().IsWebhookNameUsed(c.Request().Context(), actor(c), query(c, "name"))
	return respond(c, used, err)
}

func (h *Handler) getWebhook(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	w, err := h.store.Flags().GetWebhook(c.Request().Context(), actor(c), id)
	return respond(c, w, err)
}

func (h *Handler) createWebhook(c echo.Context) error {
	var in flagstore.WebhookInput
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.Flags().CreateWebhook(c.Request().Context(), actor(c), in)
	return respond(c, w, err)
}

func (h *Handler) updateWebhook(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	var in flagstore.WebhookInput
	if err := bind(c, &in); err != nil {
		return err
	}
	w, err := h.store.Flags().UpdateWebhook(c.Request().Context(), actor(c), id, in)
	return respond(c, w, err)
}

func (h *Handler) deleteWebhook(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	return respond(c, true, h.store.Flags().DeleteWebhook(c.Request().Context(), actor(c), id))
}

func (h *Handler) sendWebhook(c echo.Context) error {
	var in flagstore.WebhookRequest
	if err := bind(c, &in); err != nil {
		return err
	}
	d, err := h.webhooks.Send(c.Request().Context(), actor(c), in)
	return respond(c, d, err)
}

func (h *Handler) listWebhookDeliveries(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
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
	log, err := h.store.Flags().ListWebhookDeliveries(c.Request().Context(), actor(c), id,
		flagstore.WebhookDeliveryFilter{Event: query(c, "event"), Success: success, NotBefore: notBefore, Page: page(c)})
	return respond(c, log, err)
}
