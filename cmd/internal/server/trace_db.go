package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// dbTracer makes a client span of each statement and batch sent to
// PostgreSQL under a traced operation (a request, a change's notification,
// a webhook delivery): named by sqlc's query name ("GetFlag") or the
// statement's first word ("BEGIN"), with the statement's text, which holds
// no values (they are sent apart, as arguments, and never recorded).
// Statements outside any traced operation, those of the runners and
// pollers that work every second, make no span.
type dbTracer struct {
	tracer trace.Tracer
	// database is the name every connection of the pool connects to, read
	// from the first traced statement's connection: pgx hands out its
	// configuration only as a copy.
	database *atomic.Pointer[string]
}

func newDBTracer(tp trace.TracerProvider) dbTracer {
	return dbTracer{tracer: tp.Tracer(instrumentation), database: new(atomic.Pointer[string])}
}

// traced tells whether a statement sent under ctx is part of a traced
// operation, before anything is spent on its span.
func traced(ctx context.Context) bool { return trace.SpanContextFromContext(ctx).IsValid() }

// dbSpanKey keeps this tracer's span in the statement's context, so its end
// ends this span and no other.
type dbSpanKey struct{}

var postgresql = attribute.String("db.system.name", "postgresql")

// start opens a statement's or a batch's span, for a ctx its caller found
// traced.
func (t dbTracer) start(ctx context.Context, conn *pgx.Conn, name string, attrs ...attribute.KeyValue) context.Context {
	attrs = append(attrs, postgresql)
	if conn != nil {
		database := t.database.Load()
		if database == nil {
			database = &conn.Config().Database
			t.database.Store(database)
		}
		attrs = append(attrs, attribute.String("db.namespace", *database))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, dbSpanKey{}, span)
}

func (t dbTracer) end(ctx context.Context, err error) {
	span, ok := ctx.Value(dbSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if err != nil {
		// The SQLSTATE, not the message, which may quote a value.
		kind := "error"
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			kind = pgErr.Code
			span.SetAttributes(attribute.String("db.response.status_code", pgErr.Code))
		} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			kind = "canceled"
		}
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind)
	}
	span.End()
}

func (t dbTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !traced(ctx) {
		return ctx
	}
	return t.start(ctx, conn, StatementName(d.SQL), attribute.String("db.query.text", d.SQL))
}

func (t dbTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	t.end(ctx, d.Err)
}

// TraceBatchStart opens one span for a batch, named by its statements
// ("BEGIN + LockFlagInOrganization": a transaction's BEGIN goes with its
// first statement), with their texts.
func (t dbTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if !traced(ctx) {
		return ctx
	}
	var names, texts []string
	if d.Batch != nil {
		for _, q := range d.Batch.QueuedQueries {
			names, texts = append(names, StatementName(q.SQL)), append(texts, q.SQL)
		}
	}
	name := "batch"
	if len(names) > 0 {
		name = strings.Join(names, " + ")
	}
	return t.start(ctx, conn, name, attribute.Int("db.operation.batch.size", len(names)),
		attribute.String("db.query.text", strings.Join(texts, ";\n")))
}

// TraceBatchQuery notes each statement of a batch on the batch's span: they
// travel together, so none has a time of its own.
func (t dbTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if span, ok := ctx.Value(dbSpanKey{}).(trace.Span); ok {
		attrs := []attribute.KeyValue{attribute.String("db.query.text", d.SQL)}
		var pgErr *pgconn.PgError
		if errors.As(d.Err, &pgErr) {
			attrs = append(attrs, attribute.String("db.response.status_code", pgErr.Code))
		}
		span.AddEvent(StatementName(d.SQL), trace.WithAttributes(attrs...))
	}
}

func (t dbTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	t.end(ctx, d.Err)
}

// StatementName is sqlc's name of a statement ("-- name: GetFlag :one"),
// or its first word, upper case: what traces and bunting-bench's
// per-statement counts call it.
func StatementName(sql string) string {
	sql = strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		name, _, _ = strings.Cut(name, "\n")
		return name
	}
	word, _, _ := strings.Cut(sql, " ")
	word, _, _ = strings.Cut(word, "\n")
	if word == "" {
		return "statement"
	}
	return strings.ToUpper(word)
}
