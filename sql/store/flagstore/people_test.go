package flagstore_test

import (
	"context"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestFlagListNamesPeople: the list names each flag's creator and last
// changer, whether a user, an access token or a flag trigger, by their
// names of the moment: renamed, they are listed by the new name; deleted,
// by none (the changer is a Ghost, as FeatBit says).
func TestFlagListNamesPeople(t *testing.T) {
	t.Parallel()
	s, a, pool := storetest.New(t)
	ctx := context.Background()
	prod, _ := storetest.ProdAndDev(t, s, a)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		storetest.Must(t, err)
	}
	exec(`UPDATE users SET name = 'Olive Owner' WHERE id = $1`, a.UserID)

	byOwner, err := s.Flags().CreateFlag(ctx, a, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	tr, err := s.Governance().CreateTrigger(ctx, a, governance.TriggerInput{TargetID: byOwner.ID, Type: governance.TriggerTypeFlagGeneral,
		Action: governance.TriggerTurnOn, Description: "Recovery"})
	storetest.Must(t, err)
	_, err = s.Governance().RunTrigger(ctx, tr.Token, nil)
	storetest.Must(t, err)
	tok, err := s.Tokens().CreateAccessToken(ctx, a, accesstokens.AccessTokenInput{Name: "deploy", Type: core.TokenPersonal})
	storetest.Must(t, err)
	ta, err := s.IAM().Authenticate(ctx, iam.Credentials{Authorization: tok.Token})
	storetest.Must(t, err)
	_, err = s.Flags().CreateFlag(ctx, ta, prod.ID, flagstore.FlagInput{Name: "Ship", Key: "ship"})
	storetest.Must(t, err)

	type names struct{ creator, creatorEmail, changer, changerEmail string }
	listed := func() map[string]names {
		t.Helper()
		out := map[string]names{}
		for _, search := range []string{"", "pay"} { // the list, and a search by name
			page, err := s.Flags().ListFlags(ctx, a, prod.ID, flagstore.FlagFilter{Name: search, Page: core.Page{Size: 10}})
			storetest.Must(t, err)
			for _, f := range page.Items {
				var n names
				if f.Creator != nil {
					n.creator, n.creatorEmail = f.Creator.Name, f.Creator.Email
				}
				if f.LastChange != nil {
					n.changer, n.changerEmail = f.LastChange.Operator.Name, f.LastChange.Operator.Email
				}
				if seen, ok := out[f.Key]; ok && seen != n {
					t.Errorf("%s: the list names %+v, the search %+v", f.Key, seen, n)
				}
				out[f.Key] = n
			}
		}
		return out
	}
	want := map[string]names{
		"pay":  {"Olive Owner", "owner@example.com", "Trigger “Recovery”", "Trigger"},
		"ship": {"deploy", "Access token", "deploy", "Access token"},
	}
	if got := listed(); got["pay"] != want["pay"] || got["ship"] != want["ship"] {
		t.Fatalf("listed %+v, want %+v", got, want)
	}

	exec(`UPDATE users SET name = 'Olive Renamed' WHERE id = $1`, a.UserID)
	exec(`UPDATE flag_triggers SET description = '' WHERE id = $1`, tr.ID)
	exec(`UPDATE access_tokens SET name = 'deploy bot' WHERE id = $1`, tok.ID)
	var preview string
	storetest.Must(t, pool.QueryRow(ctx, `SELECT token_preview FROM flag_triggers WHERE id = $1`, tr.ID).Scan(&preview))
	want = map[string]names{
		"pay":  {"Olive Renamed", "owner@example.com", "Trigger " + preview + "…", "Trigger"},
		"ship": {"deploy bot", "Access token", "deploy bot", "Access token"},
	}
	if got := listed(); got["pay"] != want["pay"] || got["ship"] != want["ship"] {
		t.Fatalf("after renaming, listed %+v, want %+v", got, want)
	}

	storetest.Must(t, s.Tokens().DeleteAccessToken(ctx, a, tok.ID))
	if got := listed()["ship"]; got != (names{changer: "Ghost", changerEmail: "Ghost"}) {
		t.Fatalf("after deleting the token, ship is listed as %+v, want no creator and a Ghost as its changer", got)
	}
}
