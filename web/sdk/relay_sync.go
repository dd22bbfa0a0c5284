package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/web/outbound"
)

// What the management API's relay proxy routes ask of the network: a
// manual agent's bootstrap (FeatBit's AgentService.BootstrapAsync) and its
// liveness. Both go through the webhooks' network rules (web/outbound:
// private networks only where BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS says),
// since they too send to an address a person typed.

// maxAgentAnswer bounds what an agent's answer to a bootstrap is read of.
const maxAgentAnswer = 64 << 10

// agentClient is the outbound client of the relay routes, made on first use.
type agentClient struct {
	once   sync.Once
	client *http.Client
}

func (s *Server) agents() *http.Client {
	s.agentHTTP.once.Do(func() {
		s.agentHTTP.client = outbound.NewClient(outbound.Options{AllowPrivate: s.store.Webhooks().WebhookAllowPrivateNetworks()})
	})
	return s.agentHTTP.client
}

// SyncAgent pushes everything a relay proxy serves to one of its manual
// agents (POST {host}/api/public/proxy/bootstrap with the key), and records
// what the agent says it now serves. Like FeatBit, a failure is an answer
// ({success: false, reason}), not an error; an error is the actor's
// (refused, not found) or the agent unknown to the relay proxy.
func (s *Server) SyncAgent(ctx context.Context, a *core.Actor, rpID uuid.UUID, agentID string) (relayproxies.SyncResult, error) {
	plan, err := s.store.RelayProxies().PlanSync(ctx, a, rpID, agentID)
	if err != nil {
		return relayproxies.SyncResult{}, err
	}
	if len(plan.Relay.Envs) == 0 {
		return relayproxies.SyncResult{Success: true}, nil
	}
	payload, err := s.RelayPayload(ctx, plan.Relay, true, nil)
	if err != nil {
		return relayproxies.SyncResult{}, err
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return relayproxies.SyncResult{}, err
	}
	res := s.bootstrap(ctx, plan, body)
	if !res.Success {
		return res, nil
	}
	return res, s.store.RelayProxies().Synced(ctx, a, rpID, agentID, res)
}

func (s *Server) bootstrap(ctx context.Context, plan relayproxies.SyncPlan, body []byte) relayproxies.SyncResult {
	url := strings.TrimRight(plan.Host, "/") + "/api/public/proxy/bootstrap"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return relayproxies.SyncResult{Reason: "the agent's host is not a URL"}
	}
	req.Header.Set("Authorization", plan.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.agents().Do(req)
	if err != nil {
		return relayproxies.SyncResult{Reason: outbound.Describe(url, err)}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentAnswer))
	if err != nil {
		return relayproxies.SyncResult{Reason: outbound.Describe(url, err)}
	}
	if resp.StatusCode/100 != 2 {
		return relayproxies.SyncResult{Reason: outbound.Describe(url, &outbound.StatusError{URL: url, Code: resp.StatusCode})}
	}
	var got struct {
		Serves      string `json:"serves"`
		DataVersion int64  `json:"dataVersion"`
	}
	if json.Unmarshal(answer, &got) != nil {
		return relayproxies.SyncResult{Reason: "the agent's answer is not its status"}
	}
	now := s.now().UTC()
	return relayproxies.SyncResult{Success: true, SyncAt: &now, Serves: got.Serves, DataVersion: got.DataVersion}
}

// AgentQuota is how many auto agents a workspace's relay proxies may
// register: the licence quota's "auto-agents".
func (s *Server) AgentQuota() int64 { return s.agentQuota }

// AgentAvailability is FeatBit's availability check of an agent: the HTTP
// status of GET {host}/health/liveness, 503 when it cannot be reached.
func (s *Server) AgentAvailability(ctx context.Context, a *core.Actor, host string) (int, error) {
	if err := s.store.RelayProxies().AuthorizeManage(a); err != nil {
		return 0, err
	}
	if err := relayproxies.CheckAgentHost(host); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(host, "/")+"/health/liveness", nil)
	if err != nil {
		return 0, core.Invalid("agentHost_is_invalid")
	}
	resp, err := s.agents().Do(req)
	if err != nil {
		var se *outbound.StatusError
		if errors.As(err, &se) {
			return se.Code, nil
		}
		return http.StatusServiceUnavailable, nil
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
