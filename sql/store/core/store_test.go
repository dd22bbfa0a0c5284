package core_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/storetest"
)

// TestJSONColumnsReadAsSent reads json and jsonb through a configured pool:
// into json.RawMessage as PostgreSQL wrote them (SQL NULL as nil), into
// anything else decoded.
func TestJSONColumnsReadAsSent(t *testing.T) {
	_, _, pool := storetest.New(t)
	ctx := context.Background()
	var b, j, null json.RawMessage
	var decoded map[string][]int
	err := pool.QueryRow(ctx, `SELECT '{"a":[1,2]}'::jsonb, '{"a":[1, 2] }'::json, NULL::jsonb, '{"a":[3]}'::jsonb`).Scan(&b, &j, &null, &decoded)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a": [1, 2]}` || string(j) != `{"a":[1, 2] }` || null != nil || len(decoded["a"]) != 1 || decoded["a"][0] != 3 {
		t.Errorf("got %s, %s, %v, %v", b, j, null, decoded)
	}
}

// TestUUIDsReadAndSentAsUUIDs: through a configured pool uuid.UUID is
// PostgreSQL's uuid both ways, alone, in arrays and as a nullable pointer.
func TestUUIDsReadAndSentAsUUIDs(t *testing.T) {
	_, _, pool := storetest.New(t)
	ctx := context.Background()
	id, other := uuid.New(), uuid.New()
	var got uuid.UUID
	var list []uuid.UUID
	var null, some *uuid.UUID
	var text string
	err := pool.QueryRow(ctx, `SELECT $1::uuid, $2::uuid[], NULL::uuid, $3::uuid, $1::uuid::text`, id, []uuid.UUID{id, other}, &other).
		Scan(&got, &list, &null, &some, &text)
	if err != nil {
		t.Fatal(err)
	}
	if got != id || len(list) != 2 || list[1] != other || null != nil || some == nil || *some != other || text != id.String() {
		t.Errorf("got %v, %v, %v, %v, %s; want %v, [%v %v], nil, %v, %s", got, list, null, some, text, id, id, other, other, id)
	}
	// A NULL read into a uuid.UUID leaves it as it was, as its Scanner did
	// before the pool read uuids without their text.
	var left uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&left); err != nil || left != uuid.Nil {
		t.Errorf("NULL into a uuid.UUID: %v, %v; want the zero uuid", left, err)
	}
}
