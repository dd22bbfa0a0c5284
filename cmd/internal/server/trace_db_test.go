package server

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/bunting-flags/bunting/sql/dbtest"
)

// The database tracer makes a span of each statement under a traced
// operation, named by sqlc's name or the first word, with the text and no
// argument; a failure keeps its SQLSTATE, not its message; statements
// outside any traced operation make none.
func TestDBTracer(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	url, _ := dbtest.NewDatabase(t)
	ctx := context.Background()
	pool, err := Connect(ctx, url, Tracers{nil, newDBTracer(tp)}.Tracer())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil { // untraced
		t.Fatal(err)
	}
	traced, op := tp.Tracer("test").Start(ctx, "operation")
	var n int
	if err := pool.QueryRow(traced, "-- name: CountSomething :one\nSELECT $1::int", 41).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(traced, "SELECT 1 / $1::int", 0); err == nil {
		t.Fatal("dividing by zero succeeded")
	}
	op.End()

	type got struct {
		name, text, errType string
	}
	var spans []got
	for _, s := range rec.Ended() {
		if s.Name() == "operation" {
			continue
		}
		if s.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Errorf("span %s is not under the operation", s.Name())
		}
		g := got{name: s.Name()}
		for _, a := range s.Attributes() {
			switch a.Key {
			case "db.query.text":
				g.text = a.Value.AsString()
			case "error.type":
				g.errType = a.Value.AsString()
			}
			if a.Value.Type() == attribute.INT64 && a.Value.AsInt64() == 41 {
				t.Errorf("span %s records the argument 41", s.Name())
			}
		}
		spans = append(spans, g)
	}
	want := []got{{"CountSomething", "-- name: CountSomething :one\nSELECT $1::int", ""}, {"SELECT", "SELECT 1 / $1::int", "22012"}}
	if len(spans) != len(want) {
		t.Fatalf("got spans %+v, want %+v", spans, want)
	}
	for i := range want {
		if spans[i] != want[i] {
			t.Errorf("span %d: got %+v, want %+v", i, spans[i], want[i])
		}
	}
}
