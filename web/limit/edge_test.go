package limit

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestSSOStartsPerAddress: no number of starts from other addresses refuses
// an address its first; each address alone is limited to SSOStartBurst at
// once.
func TestSSOStartsPerAddress(t *testing.T) {
	t.Parallel()
	e := NewEdge()
	for i := range 1200 {
		if !e.AllowSSOStart(fmt.Sprintf("198.51.%d.%d", i/200, i%200)) {
			t.Fatalf("start %d from a fresh address: refused, want allowed", i)
		}
	}
	if !e.AllowSSOStart("192.0.2.1") {
		t.Fatal("a start after the others: refused, want allowed")
	}
	for i := range SSOStartBurst + 5 {
		if ok := e.AllowSSOStart("203.0.113.1"); i >= SSOStartBurst+2 && ok {
			t.Errorf("start %d from one address: allowed, want refused past the burst", i)
		}
	}
}

// TestTokenMintCountsOnlyWhoMayMint: a signed-in member mints ten tokens at
// once, counted per account and per address; an access token, which the
// store refuses, spends nobody's allowance.
func TestTokenMintCountsOnlyWhoMayMint(t *testing.T) {
	t.Parallel()
	e := NewEdge()
	user, org := uuid.New(), uuid.New()
	for range tokenMintBurst {
		if !e.AllowTokenMint(&core.Actor{UserID: user, TokenID: uuid.New(), OrgID: org, Address: "192.0.2.1"}) {
			t.Fatal("an access token's request was counted, want it left to the store")
		}
	}
	member := &core.Actor{UserID: user, OrgID: org, Address: "192.0.2.1"}
	for i := range tokenMintBurst {
		if !e.AllowTokenMint(member) {
			t.Fatalf("token %d of the member refused, want %d allowed at once", i, tokenMintBurst)
		}
	}
	if e.AllowTokenMint(member) {
		t.Error("token 11 of the member allowed, want refused")
	}
	if e.AllowTokenMint(&core.Actor{UserID: uuid.New(), OrgID: org, Address: "192.0.2.1"}) {
		t.Error("another member from the same address allowed, want refused (per address)")
	}
	if !e.AllowTokenMint(&core.Actor{UserID: uuid.New(), OrgID: org, Address: "192.0.2.2"}) {
		t.Error("another member from another address refused, want allowed")
	}
}
