package sdk

import (
	"encoding/json"
	"sync"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// clientPatch encodes a change's patch for each client SDK's user. Users
// differ in their key and in what the changed flags evaluate to, and a
// flag has few outcomes however many users: each outcome's encoding is made
// once and copied into the messages of every user who gets it, so a push
// to a client SDK is an evaluation of the changed flags and a copy of
// bytes, not an encoding of the payload. The bytes are those encode gives
// for the same clientPayload. It is used by one goroutine (the hub's).
type clientPatch struct {
	snap  *snapshot
	flags []clientPatchFlag
	size  int // a message's size without its user key, grown as outcomes are met
}

type clientPatchFlag struct {
	flag     *flagstore.Flag
	prepared *eval.Prepared
	outcomes map[clientOutcome][]byte
}

// clientOutcome is what of an evaluation a client SDK's flag shows.
type clientOutcome struct {
	variation        *targeting.Variation
	archived         bool
	reason           string
	sendToExperiment bool
}

const (
	clientPatchStart = `{"messageType":"data-sync","data":{"eventType":"patch","userKeyId":`
	clientPatchFlags = `,"featureFlags":[`
	clientPatchEnd   = `]}}`
)

func newClientPatch(snap *snapshot, flags []*flagstore.Flag) *clientPatch {
	p := &clientPatch{snap: snap, flags: make([]clientPatchFlag, len(flags)),
		size: len(clientPatchStart) + len(clientPatchFlags) + len(clientPatchEnd) + len(flags)}
	for i, f := range flags {
		p.flags[i] = clientPatchFlag{flag: f, prepared: snap.compiled(f).prepared, outcomes: map[clientOutcome][]byte{}}
	}
	return p
}

// message is the patch for u, a text frame's bytes of its own (it waits in
// the connection's queue).
func (p *clientPatch) message(u *eval.EndUser) []byte {
	key, err := json.Marshal(u.KeyID)
	if err != nil {
		panic("sdk: encode a user key: " + err.Error()) // a string always encodes
	}
	b := patchBuffer(p.size + len(key))
	b = append(b, clientPatchStart...)
	b = append(b, key...)
	b = append(b, clientPatchFlags...)
	for i := range p.flags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p.flags[i].encoded(p, u)...)
	}
	b = append(b, clientPatchEnd...)
	if len(b) > p.size+len(key) {
		p.size = len(b) - len(key)
	}
	return b
}

// encoded is the flag evaluated for u, as JSON.
func (pf *clientPatchFlag) encoded(p *clientPatch, u *eval.EndUser) []byte {
	ev := pf.prepared.Evaluate(*u, p.snap.preparedSegment)
	o := clientOutcome{variation: ev.Variation, archived: ev.Kind == eval.MatchArchived, reason: ev.Reason,
		sendToExperiment: ev.SendToExperiment}
	if b, ok := pf.outcomes[o]; ok {
		return b
	}
	b, err := json.Marshal(clientFlagOf(pf.flag, ev))
	if err != nil {
		panic("sdk: encode a flag: " + err.Error()) // flags are decoded from JSON; they always encode
	}
	// A flag whose outcomes are many (a reason per rule at most, a
	// variation each) stays bounded: past that, each is encoded anew.
	if len(pf.outcomes) < maxClientOutcomes {
		pf.outcomes[o] = b
	}
	return b
}

// maxClientOutcomes bounds the encodings a change keeps per flag.
const maxClientOutcomes = 256

// patchBuffers hold client patches' bytes once they are written, for the
// next change's: a change to 10,000 client SDKs would otherwise leave 10,000
// buffers to the collector, which a relay runs often (GOGC 25). A buffer is
// given back only by the writer, after its write returned; one dropped
// with its connection is the collector's.
var patchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPatch is the largest buffer kept: a patch of many flags at once
// is rare and left to the collector.
const maxPooledPatch = 16 << 10

func patchBuffer(size int) []byte {
	b := *patchBuffers.Get().(*[]byte)
	if cap(b) < size {
		return make([]byte, 0, max(size+64, 512))
	}
	return b[:0]
}

// recyclePatch gives a written patch's buffer back.
func recyclePatch(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledPatch {
		return
	}
	patchBuffers.Put(&b)
}
