package sdk

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// The shared full data-sync is byte for byte what encoding the snapshot's
// data for each connection made, is made once per snapshot, and a patched
// snapshot has its own.
func TestServerFullIsTheEncodedPayloadMadeOnce(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	flag := func(key string, enabled bool) flagstore.Flag {
		return flagstore.Flag{ID: uuid.New(), Key: key, Name: key, VariationType: "boolean", IsEnabled: enabled,
			Variations:  []flagstore.Variation{{ID: "on", Value: "true"}, {ID: "off", Value: "false"}},
			Fallthrough: flagstore.Fallthrough{Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 1}, ExptRollout: 1}}},
			UpdatedAt:   at, CreatedAt: at}
	}
	segment := flagstore.Segment{ID: uuid.New(), EnvID: uuid.New(), Name: "Seg", Key: "seg", Included: []string{"u1"}, UpdatedAt: at, CreatedAt: at}
	snap := newSnapshot(sdkdata.EnvData{Flags: []flagstore.Flag{flag("b", true), flag("a", false)}, Segments: []flagstore.Segment{segment}})

	full := snap.serverFull()
	if want := encode("data-sync", serverData(snap, eventFull, 0)); !bytes.Equal(full.bytes, want) {
		t.Fatalf("shared full data-sync:\n%s\nwant what each connection was sent:\n%s", full.bytes, want)
	}
	if again := snap.serverFull(); &again.bytes[0] != &full.bytes[0] || again.prepared != full.prepared {
		t.Error("the full data-sync was encoded again for the same snapshot")
	}
	var m struct {
		MessageType string
		Data        struct {
			EventType    string
			FeatureFlags []struct{ Key string }
			Segments     []struct{ Key string }
		}
	}
	if err := json.Unmarshal(full.bytes, &m); err != nil || m.MessageType != "data-sync" || m.Data.EventType != "full" ||
		len(m.Data.FeatureFlags) != 2 || m.Data.FeatureFlags[0].Key != "a" || len(m.Data.Segments) != 1 {
		t.Errorf("full data-sync %s (%v)", full.bytes, err)
	}

	changed := flag("a", true)
	changed.ID = snap.flags["a"].ID
	changed.UpdatedAt = at.Add(time.Second)
	next := snap.patched(map[uuid.UUID]*flagstore.Flag{changed.ID: &changed}, nil)
	if bytes.Equal(next.serverFull().bytes, full.bytes) || !bytes.Equal(next.serverFull().bytes, encode("data-sync", serverData(next, eventFull, 0))) {
		t.Errorf("the patched snapshot's full data-sync: %s", next.serverFull().bytes)
	}
	if !bytes.Equal(snap.serverFull().bytes, full.bytes) {
		t.Error("patching changed the old snapshot's full data-sync")
	}
}
