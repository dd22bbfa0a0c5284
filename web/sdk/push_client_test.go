package sdk

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestClientPatchIsTheEncodedPayload holds a push to a client SDK, made
// from outcomes encoded once per change, to the bytes encode gives for the
// payload evaluated for the same user: every kind of flag of the OFREP
// fixture (keys and values JSON escapes, archived, disabled, rollouts that
// serve no one), several changed at once, users who share outcomes and
// users who do not, keys that need escaping.
func TestClientPatchIsTheEncodedPayload(t *testing.T) {
	snap := ofrepFixture(20)
	var all []*flagstore.Flag
	snap.each(func(f *flagstore.Flag) { all = append(all, f) })
	users := []eval.EndUser{
		{KeyID: "u1"}, {KeyID: "alice", CustomizedProperties: []eval.UserProperty{{Name: "country", Value: "NL"}, {Name: "plan", Value: "pro"}}},
		{KeyID: "ann", CustomizedProperties: []eval.UserProperty{{Name: "email", Value: "ann@example.com"}}},
		{KeyID: "u-seg"}, {KeyID: `k"<&>é` + "\u2028"}, {KeyID: "old", CustomizedProperties: []eval.UserProperty{{Name: "age", Value: "1000.5"}, {Name: "tier", Value: "true"}}},
	}
	for i := range 200 {
		users = append(users, eval.EndUser{KeyID: fmt.Sprintf("user-%d", i)})
	}
	for _, flags := range [][]*flagstore.Flag{all[:1], all[3:5], all} {
		p := newClientPatch(snap, flags)
		for round := range 2 { // the second round is served from the outcomes kept
			for _, u := range users {
				want := clientPayload{EventType: eventPatch, UserKeyID: u.KeyID, FeatureFlags: make([]clientFlag, len(flags))}
				for i, f := range flags {
					want.FeatureFlags[i] = evaluateForClient(snap, f, u)
				}
				if got, w := p.message(&u), encode("data-sync", want); !bytes.Equal(got, w) {
					t.Fatalf("%d flags, round %d, user %q:\n got %s\nwant %s", len(flags), round, u.KeyID, got, w)
				}
			}
		}
	}
}
