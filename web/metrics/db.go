package metrics

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Statement error classes besides SQLSTATE's.
const (
	ClassCanceled   = "canceled"
	ClassConnection = "connection"
)

// WatchPool exports the pool's own counters (pgxpool.Stat) when scraped:
// no work on the path of a query.
func (m *Metrics) WatchPool(pool *pgxpool.Pool) {
	if m != nil {
		m.reg.MustRegister(poolCollector{pool})
	}
}

var (
	poolAcquired = prometheus.NewDesc("bunting_db_pool_acquired_connections",
		"Connections of the database pool in use now.", nil, nil)
	poolIdle = prometheus.NewDesc("bunting_db_pool_idle_connections",
		"Connections of the pool open and idle.", nil, nil)
	poolTotal = prometheus.NewDesc("bunting_db_pool_total_connections",
		"Connections of the pool open, in use, idle or being opened.", nil, nil)
	poolMax = prometheus.NewDesc("bunting_db_pool_max_connections",
		"The most connections the pool opens.", nil, nil)
	poolAcquires = prometheus.NewDesc("bunting_db_pool_acquires_total",
		"Connections taken from the pool.", nil, nil)
	poolWaits = prometheus.NewDesc("bunting_db_pool_acquire_waits_total",
		"Acquires that found no idle connection and waited for one to be opened or freed.", nil, nil)
	poolWaitSeconds = prometheus.NewDesc("bunting_db_pool_acquire_wait_seconds_total",
		"Time acquires that waited spent waiting.", nil, nil)
	poolCanceled = prometheus.NewDesc("bunting_db_pool_canceled_acquires_total",
		"Acquires given up by their context before a connection came.", nil, nil)
)

// poolCollector reads a pgxpool's statistics at each scrape.
type poolCollector struct{ pool *pgxpool.Pool }

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolAcquires, poolWaits, poolWaitSeconds, poolCanceled} {
		ch <- d
	}
}

func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitSeconds, prometheus.CounterValue, s.EmptyAcquireWaitTime().Seconds())
	ch <- prometheus.MustNewConstMetric(poolCanceled, prometheus.CounterValue, float64(s.CanceledAcquireCount()))
}

// StatementTracer counts the statements that fail, for a pgx connection
// config's Tracer (composed with others by the server). It is nil when m
// is: no tracer at all.
func (m *Metrics) StatementTracer() *StatementErrors {
	if m == nil {
		return nil
	}
	return &StatementErrors{m: m}
}

// StatementErrors is a pgx QueryTracer and BatchTracer that counts failed
// statements by class; a success costs it nothing but the calls.
type StatementErrors struct{ m *Metrics }

// TraceQueryStart passes ctx on.
func (t *StatementErrors) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

// TraceQueryEnd counts a failed statement.
func (t *StatementErrors) TraceQueryEnd(_ context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.count(data.Err)
}

// TraceBatchStart passes ctx on.
func (t *StatementErrors) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery counts a failed statement of a batch.
func (t *StatementErrors) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	t.count(data.Err)
}

// TraceBatchEnd counts nothing: a batch's failure is its statement's.
func (t *StatementErrors) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (t *StatementErrors) count(err error) {
	if err == nil {
		return
	}
	t.m.statementErrors.WithLabelValues(errorClass(err)).Inc()
}

// errorClass is a bounded label for a statement's failure: SQLSTATE's
// two-character class, or one of ours.
func errorClass(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && len(pgErr.Code) == 5:
		if pgErr.Code == "57014" { // query_canceled: a context cut it short
			return ClassCanceled
		}
		return pgErr.Code[:2]
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ClassCanceled
	}
	return ClassConnection
}
