package runner

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/eval"
)

// The buffer's memory is bounded by keys and by bytes: past either, new keys
// are dropped and counted, while keys already pending still update.
func TestEndUserBufferIsBounded(t *testing.T) {
	b := NewEndUsers(nil, nil)
	env := uuid.New()
	t0 := time.Now()
	users := make([]eval.EndUser, maxPendingEndUsers+10)
	for i := range users {
		users[i] = eval.EndUser{KeyID: "u" + strconv.Itoa(i)}
	}
	b.Saw(env, users, t0)
	if len(b.pending) != maxPendingEndUsers || b.dropped != 10 {
		t.Fatalf("%d pending, %d dropped; want %d and 10", len(b.pending), b.dropped, maxPendingEndUsers)
	}
	name := "Zero"
	b.Saw(env, []eval.EndUser{{KeyID: "u0", Name: &name}}, t0.Add(time.Second))
	if p := b.pending[endUserKey{env, "u0"}]; *p.name != "Zero" || !p.last.Equal(t0.Add(time.Second)) || !p.first.Equal(t0) {
		t.Fatalf("a pending key did not update: %+v", p)
	}
	select {
	case <-b.kick:
	default:
		t.Fatal("a full batch did not ask for a write")
	}

	// Large users fill the byte budget long before the key budget.
	b = NewEndUsers(nil, nil)
	// The longest values and the most properties store.CheckEndUser takes.
	big := strings.Repeat("x", 1024)
	props := make([]eval.UserProperty, 100)
	for i := range props {
		props[i] = eval.UserProperty{Name: "p" + strconv.Itoa(i), Value: big}
	}
	for i := range 2_000 {
		b.Saw(env, []eval.EndUser{{KeyID: "big" + strconv.Itoa(i), CustomizedProperties: props}}, t0)
	}
	if b.bytes > maxPendingBytes || b.dropped == 0 || len(b.pending) == 0 {
		t.Fatalf("%d bytes pending (budget %d), %d keys, %d dropped", b.bytes, maxPendingBytes, len(b.pending), b.dropped)
	}
	// Users the store would refuse are not buffered at all.
	b.Saw(env, []eval.EndUser{{KeyID: " "}, {KeyID: "ok\x00"}}, t0)
	if _, ok := b.pending[endUserKey{env, " "}]; ok {
		t.Fatal("a blank key was buffered")
	}
}
