package server

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// pgxTracers is several pgx tracers as one, for the pool's single Tracer:
// each sees every statement, batch and copy that it implements the tracer
// of, in order, each start's context passed to the next.
type pgxTracers []pgx.QueryTracer

// joinTracers is the tracers given, nils left out, as one; nil for none.
func joinTracers(tracers ...pgx.QueryTracer) pgx.QueryTracer {
	var ts pgxTracers
	for _, t := range tracers {
		if t != nil {
			ts = append(ts, t)
		}
	}
	switch len(ts) {
	case 0:
		return nil
	case 1:
		return ts[0]
	}
	return ts
}

func (ts pgxTracers) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	for _, t := range ts {
		ctx = t.TraceQueryStart(ctx, conn, d)
	}
	return ctx
}

func (ts pgxTracers) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryEndData) {
	for _, t := range ts {
		t.TraceQueryEnd(ctx, conn, d)
	}
}

func (ts pgxTracers) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, t := range ts {
		if bt, ok := t.(pgx.BatchTracer); ok {
			ctx = bt.TraceBatchStart(ctx, conn, d)
		}
	}
	return ctx
}

func (ts pgxTracers) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	for _, t := range ts {
		if bt, ok := t.(pgx.BatchTracer); ok {
			bt.TraceBatchQuery(ctx, conn, d)
		}
	}
}

func (ts pgxTracers) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchEndData) {
	for _, t := range ts {
		if bt, ok := t.(pgx.BatchTracer); ok {
			bt.TraceBatchEnd(ctx, conn, d)
		}
	}
}

func (ts pgxTracers) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	for _, t := range ts {
		if ct, ok := t.(pgx.CopyFromTracer); ok {
			ctx = ct.TraceCopyFromStart(ctx, conn, d)
		}
	}
	return ctx
}

func (ts pgxTracers) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceCopyFromEndData) {
	for _, t := range ts {
		if ct, ok := t.(pgx.CopyFromTracer); ok {
			ct.TraceCopyFromEnd(ctx, conn, d)
		}
	}
}
