package server_test

import (
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

// TestRelayConfig: a relay needs its upstream and key, and its connection
// caps per secret, organization and environment default to its total.
func TestRelayConfig(t *testing.T) {
	_, _, err := server.LoadRelayConfig(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "BUNTING_RELAY_UPSTREAM") || !strings.Contains(err.Error(), "BUNTING_RELAY_KEY") {
		t.Fatalf("no settings: %v, want both named", err)
	}
	vars := map[string]string{"BUNTING_RELAY_UPSTREAM": "https://bunting.example.com/", "BUNTING_RELAY_KEY": "rp-abc",
		"BUNTING_SDK_CONNECTIONS": "30000"}
	cfg, rc, err := server.LoadRelayConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if rc.Upstream.String() != "https://bunting.example.com" || rc.Key != "rp-abc" {
		t.Errorf("upstream %s, key %s", rc.Upstream, rc.Key)
	}
	if cfg.SDKConnections != 30000 || cfg.SDKConnectionsPerSecret != 30000 || cfg.SDKConnectionsPerOrg != 30000 || cfg.SDKConnectionsPerEnv != 30000 {
		t.Errorf("caps %d/%d/%d/%d, want the total for each", cfg.SDKConnections, cfg.SDKConnectionsPerSecret, cfg.SDKConnectionsPerOrg, cfg.SDKConnectionsPerEnv)
	}
	cfg, _, _ = server.LoadRelayConfig(func(k string) string {
		return map[string]string{"BUNTING_RELAY_UPSTREAM": "http://up:8080", "BUNTING_RELAY_KEY": "rp-x"}[k]
	})
	if cfg.SDKConnections != server.RelayConnections || cfg.SDKConnectionsPerOrg != server.RelayConnections {
		t.Errorf("default caps %d/%d, want %d", cfg.SDKConnections, cfg.SDKConnectionsPerOrg, server.RelayConnections)
	}
	if _, _, err := server.LoadRelayConfig(func(k string) string {
		return map[string]string{"BUNTING_RELAY_UPSTREAM": "ftp://up", "BUNTING_RELAY_KEY": "secret"}[k]
	}); err == nil {
		t.Error("an ftp upstream and a key that is not a relay proxy's were taken")
	}
}
