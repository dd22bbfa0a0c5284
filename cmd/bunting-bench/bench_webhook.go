package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// scenarioHangingWebhook is flag-description with a webhook on every flag
// event whose receiver takes each request and never answers: a change
// queues its delivery in its own transaction and the worker sends it
// later, so the receiver must not slow the changes down. Its check holds
// the median to flag-description's, within hangingWebhookFactor times
// plus hangingWebhookSlack.
const (
	scenarioHangingWebhook = "flag-hanging-webhook"
	hangingWebhookFactor   = 3
	hangingWebhookSlack    = 20 * time.Millisecond
)

// hangingWebhook is the scenario's webhook and its receiver.
type hangingWebhook struct {
	id   string
	srv  *http.Server
	stop chan struct{}
}

// prepareHangingWebhook starts the receiver on loopback (the bench server
// lets webhooks reach it: BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS) and makes
// the webhook through the API, then loads the revisions as flag-description
// does.
func prepareHangingWebhook(ctx context.Context, w *benchWorld, clients []*benchClient) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := &hangingWebhook{stop: make(chan struct{})}
	h.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-h.stop:
		case <-r.Context().Done():
		}
	})}
	go h.srv.Serve(l)
	w.webhook = h
	body := jsonBody(webhooks.WebhookInput{Name: fmt.Sprintf("Hangs %d", w.runs), URL: "http://" + l.Addr().String() + "/hook",
		Scopes: []string{w.projectID.String() + "/" + w.envID.String()}, Events: webhooks.WebhookEvents, IsActive: true})
	var made struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := w.call(ctx, "POST", w.buntingURL+"/api/v1/webhooks", body, true, &made); err != nil {
		return fmt.Errorf("make the webhook: %w", err)
	}
	h.id = made.Data.ID
	return loadRevisions(ctx, w, clients)
}

// cleanupHangingWebhook deletes the webhook, with its queued deliveries,
// then lets the receiver's hanging requests go.
func cleanupHangingWebhook(ctx context.Context, w *benchWorld) error {
	h := w.webhook
	w.webhook = nil
	err := w.call(ctx, "DELETE", w.buntingURL+"/api/v1/webhooks/"+h.id, nil, true, nil)
	close(h.stop)
	return errors.Join(err, h.srv.Close())
}
