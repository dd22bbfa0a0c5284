package sdk

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Data-sync event types.
const (
	eventFull  = "full"
	eventPatch = "patch"
)

// message is every WebSocket message, in both directions.
type message struct {
	MessageType string `json:"messageType"`
	Data        any    `json:"data"`
}

// pong is FeatBit's answer to a ping, byte for byte; pongMessage is it
// framed once for every connection.
var (
	pong        = []byte(`{"messageType":"pong","data":{}}`)
	pongMessage = prepare(pong)
)

// prepare frames a text message once, so its bytes are written to each
// connection it goes to without a copy of their own.
func prepare(msg []byte) *websocket.PreparedMessage {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err != nil {
		// Only compression can fail, and it is off.
		panic("sdk: prepare a message: " + err.Error())
	}
	return pm
}

// serverPayload is a server SDK's data: flags and segments to evaluate with.
type serverPayload struct {
	EventType    string           `json:"eventType"`
	FeatureFlags []flagstore.Flag `json:"featureFlags"`
	Segments     []sdkSegment     `json:"segments"`
}

// sdkSegment is a segment as FeatBit sends it to SDKs: without its type,
// scopes and workspace, with the receiving environment as envId.
type sdkSegment struct {
	ID          uuid.UUID               `json:"id"`
	EnvID       uuid.UUID               `json:"envId"`
	Name        string                  `json:"name"`
	Key         string                  `json:"key"`
	Description string                  `json:"description"`
	Included    []string                `json:"included"`
	Excluded    []string                `json:"excluded"`
	Rules       []flagstore.SegmentRule `json:"rules"`
	Tags        []string                `json:"tags"`
	IsArchived  bool                    `json:"isArchived"`
	CreatedAt   time.Time               `json:"createdAt"`
	UpdatedAt   time.Time               `json:"updatedAt"`
}

// version is what SDKs version an item by: its updatedAt in milliseconds.
func version(t time.Time) int64 { return t.UnixMilli() }

// sdkFlag is a flag in the management shape SDKs read, with every array
// present: the node SDK throws on a null array. The snapshot's flag is
// shared, so what changes is copied first.
func sdkFlag(f *flagstore.Flag) flagstore.Flag {
	c := *f
	c.Variations = core.OrEmpty(c.Variations)
	c.TargetUsers = append([]flagstore.TargetUser{}, c.TargetUsers...)
	for i := range c.TargetUsers {
		c.TargetUsers[i].KeyIDs = core.OrEmpty(c.TargetUsers[i].KeyIDs)
	}
	c.Rules = append([]flagstore.FlagRule{}, c.Rules...)
	for i := range c.Rules {
		c.Rules[i].Conditions = core.OrEmpty(c.Rules[i].Conditions)
		c.Rules[i].Variations = core.OrEmpty(c.Rules[i].Variations)
	}
	c.Fallthrough.Variations = core.OrEmpty(c.Fallthrough.Variations)
	c.Tags = core.OrEmpty(c.Tags)
	return c
}

func toSDKSegment(sg *flagstore.Segment) sdkSegment {
	rules := append([]flagstore.SegmentRule{}, sg.Rules...)
	for i := range rules {
		rules[i].Conditions = core.OrEmpty(rules[i].Conditions)
	}
	return sdkSegment{ID: sg.ID, EnvID: sg.EnvID, Name: sg.Name, Key: sg.Key, Description: sg.Description,
		Included: core.OrEmpty(sg.Included), Excluded: core.OrEmpty(sg.Excluded), Rules: rules, Tags: core.OrEmpty(sg.Tags),
		IsArchived: sg.IsArchived, CreatedAt: sg.CreatedAt, UpdatedAt: sg.UpdatedAt}
}

// serverData is a server SDK's data-sync answer: everything when full,
// otherwise the items changed after since (in milliseconds, as SDKs count).
func serverData(snap *snapshot, eventType string, since int64) serverPayload {
	p := serverPayload{EventType: eventType, FeatureFlags: []flagstore.Flag{}, Segments: []sdkSegment{}}
	snap.each(func(f *flagstore.Flag) {
		if eventType == eventFull || version(f.UpdatedAt) > since {
			p.FeatureFlags = append(p.FeatureFlags, sdkFlag(f))
		}
	})
	for _, sg := range snap.sortedSegments() {
		if eventType == eventFull || version(sg.UpdatedAt) > since {
			p.Segments = append(p.Segments, toSDKSegment(sg))
		}
	}
	return p
}

// clientPayload is a client SDK's data: flags evaluated for its user.
type clientPayload struct {
	EventType    string       `json:"eventType"`
	UserKeyID    string       `json:"userKeyId"`
	FeatureFlags []clientFlag `json:"featureFlags"`
}

// clientFlag is one flag evaluated for a client SDK's user.
type clientFlag struct {
	ID               string            `json:"id"` // the flag's key
	Variation        *string           `json:"variation"`
	VariationType    string            `json:"variationType"`
	VariationID      *string           `json:"variationId"`
	MatchReason      string            `json:"matchReason"`
	VariationOptions []variationOption `json:"variationOptions"`
	SendToExperiment bool              `json:"sendToExperiment"`
	Timestamp        int64             `json:"timestamp"`
}

type variationOption struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// evaluateForClient evaluates a flag for a client SDK's user as FeatBit's
// server does: an archived flag has no variation; a rollout that holds no
// one serves FeatBit's empty variation.
func evaluateForClient(snap *snapshot, f *flagstore.Flag, u eval.EndUser) clientFlag {
	return clientFlagOf(f, snap.compiled(f).prepared.Evaluate(u, snap.preparedSegment))
}

// clientFlag is f as a client SDK gets it for an evaluation ev of it.
func clientFlagOf(f *flagstore.Flag, ev eval.Evaluation) clientFlag {
	cf := clientFlag{ID: f.Key, VariationType: f.VariationType, MatchReason: ev.Reason, SendToExperiment: ev.SendToExperiment,
		Timestamp: version(f.UpdatedAt), VariationOptions: make([]variationOption, len(f.Variations))}
	for i, v := range f.Variations {
		cf.VariationOptions[i] = variationOption{ID: v.ID, Value: v.Value}
	}
	switch {
	case ev.Variation != nil:
		cf.Variation, cf.VariationID = &ev.Variation.Value, &ev.Variation.ID
	case ev.Kind != eval.MatchArchived:
		empty := ""
		cf.Variation, cf.VariationID = &empty, &empty
	}
	return cf
}

// clientData is a client SDK's data-sync answer for its user.
func clientData(snap *snapshot, eventType string, since int64, u eval.EndUser) clientPayload {
	p := clientPayload{EventType: eventType, UserKeyID: u.KeyID, FeatureFlags: []clientFlag{}}
	snap.each(func(f *flagstore.Flag) {
		if eventType == eventFull || version(f.UpdatedAt) > since {
			p.FeatureFlags = append(p.FeatureFlags, evaluateForClient(snap, f, u))
		}
	})
	return p
}

// encode is a message as a text frame's bytes.
func encode(messageType string, data any) []byte {
	b, err := json.Marshal(message{MessageType: messageType, Data: data})
	if err != nil {
		// Flags and segments are decoded from JSON; they always encode.
		panic("sdk: encode " + messageType + ": " + err.Error())
	}
	return b
}
