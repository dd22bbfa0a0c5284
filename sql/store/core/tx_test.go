package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/dbtest"
)

// roundTrips records what each round trip to PostgreSQL carried: a
// statement alone, or a batch of them ("BEGIN + INSERT").
type roundTrips struct {
	mu    sync.Mutex
	trips []string
	batch []string
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips = append(r.trips, statementWord(d.SQL))
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (r *roundTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batch = append(r.batch, statementWord(d.SQL))
}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips, r.batch = append(r.trips, strings.Join(r.batch, " + ")), nil
}

func (r *roundTrips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	trips := r.trips
	r.trips = nil
	return trips
}

func statementWord(sql string) string {
	word, _, _ := strings.Cut(sql, " ")
	return word
}

// TestTransactionsBeginWithTheirFirstStatement: InTx's transaction sends
// BEGIN with its first statement, in one round trip, and is otherwise a
// transaction as pgx's: it commits what fn wrote when fn succeeds, and
// nothing when fn fails, panics or carries on past a failed statement; a
// transaction that sends nothing never begins; and its connection goes back
// to the pool outside any transaction.
func TestTransactionsBeginWithTheirFirstStatement(t *testing.T) {
	trips := &roundTrips{}
	pool := dbtest.New(t, func(cfg *pgxpool.Config) {
		ConfigurePool(cfg)
		cfg.ConnConfig.Tracer = trips
		cfg.MaxConns = 1 // every transaction on the same connection
	})
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE tx_probe (n int PRIMARY KEY, xact bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint)`); err != nil {
		t.Fatal(err)
	}
	insert := func(tx db.DBTX, n int, args ...any) error {
		_, err := tx.Exec(ctx, `INSERT INTO tx_probe (n) VALUES ($1)`, append(args, n)...)
		return err
	}
	stored := func() (rows []int, transactions int) {
		t.Helper()
		err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(n ORDER BY n), '{}'), count(DISTINCT xact) FROM tx_probe`).Scan(&rows, &transactions)
		if err != nil {
			t.Fatal(err)
		}
		return rows, transactions
	}
	trips.take()

	// Committed: the first statement went with BEGIN; both rows in one transaction.
	err := runTx(ctx, pool, func(tx db.DBTX) error {
		if err := insert(tx, 1); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM tx_probe`).Scan(&n); err != nil || n != 1 {
			return errors.Join(err, errors.New("the first row is not visible to the second statement"))
		}
		return insert(tx, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := trips.take(), []string{"begin + INSERT", "SELECT", "INSERT", "commit"}; !slices.Equal(got, want) {
		t.Errorf("round trips %q, want %q", got, want)
	}
	if rows, transactions := stored(); !slices.Equal(rows, []int{1, 2}) || transactions != 1 {
		t.Fatalf("stored %v in %d transactions, want [1 2] in one", rows, transactions)
	}

	// Refused, failed, carried on past a failure, panicked: nothing written.
	failures := map[string]func(tx db.DBTX) error{
		"fn refuses":            func(tx db.DBTX) error { return errors.Join(insert(tx, 3), errors.New("refused")) },
		"first statement fails": func(tx db.DBTX) error { return errors.Join(insert(tx, 1), insert(tx, 3)) },
		"later statement fails": func(tx db.DBTX) error { return errors.Join(insert(tx, 3), insert(tx, 1)) },
		"failure ignored": func(tx db.DBTX) error {
			_ = insert(tx, 3)
			_ = insert(tx, 1)
			return nil
		},
		"first rows fail": func(tx db.DBTX) error {
			rows, err := tx.Query(ctx, `SELECT 1 / (n - 1) FROM tx_probe`)
			if err != nil {
				return err
			}
			rows.Close()
			return errors.Join(rows.Err(), insert(tx, 3))
		},
	}
	for name, fn := range failures {
		if err := runTx(ctx, pool, fn); err == nil {
			t.Errorf("%s: no error", name)
		}
		if rows, _ := stored(); !slices.Equal(rows, []int{1, 2}) {
			t.Fatalf("%s: stored %v, want [1 2]", name, rows)
		}
	}
	if err := runTx(ctx, pool, failures["failure ignored"]); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("a failure ignored: %v, want %v", err, pgx.ErrTxCommitRollback)
	}
	var pgErr *pgconn.PgError
	if err := runTx(ctx, pool, failures["first statement fails"]); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("a duplicate first row: %v, want unique_violation", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not come through")
			}
		}()
		_ = runTx(ctx, pool, func(tx db.DBTX) error {
			_ = insert(tx, 3)
			panic("fn panics")
		})
	}()
	if rows, _ := stored(); !slices.Equal(rows, []int{1, 2}) {
		t.Fatalf("after a panic: stored %v, want [1 2]", rows)
	}

	// Nothing sent: nothing begun.
	trips.take()
	if err := runTx(ctx, pool, func(db.DBTX) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := runTx(ctx, pool, func(db.DBTX) error { return errors.New("refused before reading") }); err == nil {
		t.Error("a refusal before any statement: no error")
	}
	if got := trips.take(); len(got) != 0 {
		t.Errorf("transactions without statements sent %q", got)
	}

	// A first statement in its own execution mode (searchPlans) follows a
	// BEGIN of its own, in the same transaction as the rest.
	err = runTx(ctx, pool, func(tx db.DBTX) error {
		return errors.Join(insert(tx, 3, pgx.QueryExecModeCacheDescribe), insert(tx, 4))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := trips.take()[:2], []string{"begin", "INSERT"}; !slices.Equal(got, want) {
		t.Errorf("round trips %q, want %q first", got, want)
	}
	if rows, transactions := stored(); !slices.Equal(rows, []int{1, 2, 3, 4}) || transactions != 2 {
		t.Fatalf("stored %v in %d transactions, want [1 2 3 4] in two", rows, transactions)
	}

	// The one connection went back idle every time: it still serves.
	if stat := pool.Stat(); stat.AcquiredConns() != 0 {
		t.Errorf("%d connections still acquired", stat.AcquiredConns())
	}
}
