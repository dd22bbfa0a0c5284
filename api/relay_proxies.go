package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
)

// Relay proxies: FeatBit's RelayProxyController, and the licence quota of
// WorkspaceController. Who may list and manage them is the store's rule;
// the calls to agents (a manual sync, the availability check) are the SDK
// server's, which builds what relays are sent.

func (h *Handler) listRelayProxies(c echo.Context) error {
	rps, err := h.store.RelayProxies().List(c.Request().Context(), actor(c), relayproxies.Filter{Name: query(c, "name"), Page: page(c)})
	return respond(c, rps, err)
}

func (h *Handler) isRelayProxyNameUsed(c echo.Context) error {
	used, err := h.store.RelayProxies().IsNameUsed(c.Request().Context(), actor(c), query(c, "name"))
	return respond(c, used, err)
}

func (h *Handler) createRelayProxy(c echo.Context) error {
	var in relayproxies.Input
	if err := bind(c, &in); err != nil {
		return err
	}
	rp, err := h.store.RelayProxies().Create(c.Request().Context(), actor(c), in)
	return respond(c, rp, err)
}

func (h *Handler) updateRelayProxy(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in relayproxies.Input) (any, error) {
		return true, h.store.RelayProxies().Update(ctx, a, ids.ID, in)
	})
}

func (h *Handler) deleteRelayProxy(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.RelayProxies().Delete(ctx, a, ids.ID)
	})
}

func (h *Handler) relayAgentAvailability(c echo.Context) error {
	status, err := h.relays.AgentAvailability(c.Request().Context(), actor(c), query(c, "agentHost"))
	return respond(c, status, err)
}

// syncRelayAgent pushes to the agent at the host the relay proxy lists:
// FeatBit's UI also sends ?host=, which is not used, so the key goes
// nowhere but where its relay proxy says.
func (h *Handler) syncRelayAgent(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		if err := noBody(c); err != nil {
			return nil, err
		}
		return h.relays.SyncAgent(ctx, a, ids.RelayProxy, c.Param("agentId"))
	})
}

func (h *Handler) licenseQuota(c echo.Context) error {
	q, err := h.store.RelayProxies().LicenseQuota(c.Request().Context(), actor(c), h.relays.AgentQuota())
	return respond(c, q, err)
}
