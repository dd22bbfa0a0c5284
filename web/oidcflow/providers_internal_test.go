package oidcflow

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestProviderCacheIsBounded: providers are kept for providerTTL, at most
// maxProviders of them, forgetting the one read longest ago first.
func TestProviderCacheIsBounded(t *testing.T) {
	t.Parallel()
	c := newProviderCache()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return clock }
	reads := map[providerKey]int{}
	get := func(key providerKey) bool {
		_, kept, err := c.get(context.Background(), key, false, func(context.Context) (provider, error) {
			reads[key]++
			return provider{Discovery: Discovery{Issuer: key.issuer}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return kept
	}
	key := func(i int) providerKey { return providerKey{issuer: fmt.Sprintf("https://id%d.example.com", i)} }
	for i := range maxProviders + 1 {
		get(key(i))
		clock = clock.Add(time.Second)
	}
	if len(c.kept) != maxProviders {
		t.Errorf("%d providers kept, want %d", len(c.kept), maxProviders)
	}
	if get(key(0)) || !get(key(maxProviders)) || reads[key(0)] != 2 {
		t.Errorf("the provider read first was not the one forgotten: reads %v", reads)
	}
	clock = clock.Add(providerTTL)
	if get(key(maxProviders)) || reads[key(maxProviders)] != 2 {
		t.Errorf("a provider read %v ago was kept", providerTTL)
	}
}
