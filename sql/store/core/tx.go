package core

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
)

// runTx runs fn in a transaction on a connection of pool whose BEGIN goes to
// PostgreSQL with fn's first statement, in one round trip (a pipeline pgx
// sends as a batch), rather than in a round trip of its own: a change of a
// flag or a segment is BEGIN, three statements and COMMIT: five round trips
// become four. A transaction that sends nothing (a change refused before it
// read anything) never begins.
// It commits when fn returns nil and rolls back otherwise, or when fn panics.
func runTx(ctx context.Context, pool *pgxpool.Pool, fn func(db.DBTX) error) (err error) {
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection left inside a transaction (a ROLLBACK that failed) is
	// closed rather than pooled again: pgxpool checks as it takes it back.
	defer pooled.Release()
	tx := &pipelinedTx{conn: pooled.Conn()}
	defer func() {
		// Still begun: fn failed or panicked, or COMMIT did not end it.
		if tx.begun {
			_, _ = tx.conn.Exec(ctx, "rollback")
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if !tx.begun {
		return nil
	}
	tag, err := tx.conn.Exec(ctx, "commit")
	tx.begun = tx.conn.PgConn().TxStatus() != 'I'
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		// A statement failed and fn went on regardless.
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// pipelinedTx is runTx's transaction: its first statement goes out after
// a BEGIN, in one batch, and every later one as usual.
type pipelinedTx struct {
	conn  *pgx.Conn
	begun bool
}

// begin readies the transaction for a statement: it tells whether the
// statement is the first, to go with BEGIN in one batch (withBegin). A
// first statement that chooses its own execution mode (searchPlans) cannot,
// as pgx runs a batch in one mode: BEGIN goes ahead of it alone.
func (t *pipelinedTx) begin(ctx context.Context, args []any) (withBegin bool, err error) {
	if t.begun {
		return false, nil
	}
	if len(args) == 0 {
		return true, nil
	}
	if _, ownMode := args[0].(pgx.QueryExecMode); !ownMode {
		return true, nil
	}
	t.begun = true
	_, err = t.conn.Exec(ctx, "begin")
	return false, err
}

// withBegin sends BEGIN and the first statement, and reads BEGIN's answer:
// the statement's is the batch's next.
func (t *pipelinedTx) withBegin(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	t.begun = true
	var b pgx.Batch
	b.Queue("begin")
	b.Queue(sql, args...)
	results := t.conn.SendBatch(ctx, &b)
	if _, err := results.Exec(); err != nil {
		return nil, errors.Join(err, results.Close())
	}
	return results, nil
}

func (t *pipelinedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	first, err := t.begin(ctx, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	if !first {
		return t.conn.Exec(ctx, sql, args...)
	}
	results, err := t.withBegin(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := results.Exec()
	return tag, errors.Join(err, results.Close())
}

func (t *pipelinedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	first, err := t.begin(ctx, args)
	if err != nil {
		return nil, err
	}
	if !first {
		return t.conn.Query(ctx, sql, args...)
	}
	results, err := t.withBegin(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := results.Query()
	if err != nil {
		return nil, errors.Join(err, results.Close())
	}
	return &batchRows{Rows: rows, results: results}, nil
}

func (t *pipelinedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.begun {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	if err != nil {
		return errRow{err}
	}
	return firstRow{rows}
}

// batchRows are the first statement's rows: closing them closes the batch,
// which frees the connection for the next statement.
type batchRows struct {
	pgx.Rows
	results  pgx.BatchResults
	closeErr error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.results != nil {
		r.closeErr, r.results = r.results.Close(), nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.closeErr
}

// firstRow is QueryRow's answer over rows, as pgx's own: the first row, or
// pgx.ErrNoRows.
type firstRow struct{ rows pgx.Rows }

func (r firstRow) Scan(dest ...any) error {
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// errRow is a row that failed before it was read.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
