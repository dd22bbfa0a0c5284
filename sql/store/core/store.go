// Package core is what every seam of the store stands on: the Actor and the
// checks made of it, the transaction (InTx) and its audit entry (Audit), the
// change outbox, validation, paging, the domain errors and their
// translation from the database's, and the projects and environments every
// seam acts in. The seams (iam, flagstore, sdkdata) are packages above it
// and hold a *Core; it imports none of them. What it exports beyond the
// domain's types is for the seams, not for the surfaces, which reach the
// store through sql/store.Store.
package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
)

// Core is the store's shared state over one PostgreSQL database, which every
// seam holds.
type Core struct {
	Pool           *pgxpool.Pool
	Q              *db.Queries
	ServerKeys     Keys
	Log            *slog.Logger
	PasswordCost   int
	SessionTTL     time.Duration
	LoginDelayStep time.Duration
	changes        *feed.Notifier
	// BaseURL is Options.BaseURL, without a trailing slash.
	BaseURL string

	DummyOnce sync.Once
	Dummy     string

	// SSOPrivateNetworks opens loopback and private addresses to single
	// sign-on, WebhookPrivateNetworks to webhooks: two settings, so trusting
	// an identity provider inside the network does not let every webhook
	// author reach it.
	SSOPrivateNetworks, WebhookPrivateNetworks bool
	// now is the clock sign-in attempts expire by (Options.Now).
	Now func() time.Time

	// access follows changes to access, for caches of resolved actors.
	access *accessWatch

	// MaxEndUsersPerEnv bounds the end users kept per environment.
	MaxEndUsersPerEnv int64

	// ChangesRecorded counts changes written to the change outbox; a
	// transaction that wrote some signals commits after it commits, for
	// the listener to announce them.
	ChangesRecorded atomic.Int64
	commits         chan struct{}
	// OutboxWrites counts webhook deliveries queued; a transaction that
	// queued some wakes this instance's worker after commit (OutboxKick).
	OutboxWrites atomic.Int64
	OutboxKick   chan struct{}

	// hookEvents and hookQueue are the webhooks' part of every audit entry:
	// the webhook events a change raises, and the deliveries it queues in
	// the change's transaction. The webhooks sit above the core, so the
	// store that holds every seam passes them in (SetWebhooks); nil, a
	// change raises none.
	hookEvents func(a *Actor, ch Change) []string
	hookQueue  func(ctx context.Context, q *db.Queries, a *Actor, ch Change, events []string) error
}

// SetWebhooks connects the webhooks' part of every audit entry (see
// hookEvents); sql/store.New calls it once, before the store is used.
func (s *Core) SetWebhooks(events func(a *Actor, ch Change) []string,
	queue func(ctx context.Context, q *db.Queries, a *Actor, ch Change, events []string) error) {
	s.hookEvents, s.hookQueue = events, queue
}

// WebhookEvents are the webhook events ch raises (none before SetWebhooks):
// a seam that writes its own audit entry asks for them here, as Audit does.
func (s *Core) WebhookEvents(a *Actor, ch Change) []string {
	if s.hookEvents == nil {
		return nil
	}
	return s.hookEvents(a, ch)
}

// QueueWebhooks queues the deliveries of events, raised by ch, in the
// change's transaction q, as Audit does: a seam below the webhooks queues
// them through the core.
func (s *Core) QueueWebhooks(ctx context.Context, q *db.Queries, a *Actor, ch Change, events []string) error {
	if s.hookQueue == nil {
		return nil
	}
	return s.hookQueue(ctx, q, a, ch, events)
}

// End-user limits: the core holds them because Options sets the first and
// copying a flag to another environment checks the second.
const (
	// DefaultMaxEndUsersPerEnv bounds the end users kept per environment
	// (BUNTING_MAX_END_USERS_PER_ENV): past it new keys are dropped.
	DefaultMaxEndUsersPerEnv = 1_000_000
	// MaxEndUserProperties bounds the property names kept per environment.
	MaxEndUserProperties = 1_000
)

// SessionLifetime is how long a sign-in lasts, from the moment it is made: an
// API session token's and an admin page session's alike.
const SessionLifetime = 12 * time.Hour

// Options tune a Store; the zero value is production-ready.
type Options struct {
	// PasswordCost is the bcrypt cost; tests lower it to keep the suite fast.
	PasswordCost int
	// SessionTTL is how long a session token lasts; SessionLifetime when zero.
	SessionTTL time.Duration
	// LoginDelayStep is how much each failed sign-in beyond the third delays
	// the next attempt; 250ms when zero.
	LoginDelayStep time.Duration
	// AllowPrivateNetworks lets single sign-on settings name providers on
	// loopback and private addresses, and over plain http
	// (BUNTING_SSO_ALLOW_PRIVATE_NETWORKS): for tests and providers inside
	// the network. Off, only https providers on public addresses are reached.
	AllowPrivateNetworks bool
	// WebhookAllowPrivateNetworks lets webhooks deliver to loopback and
	// private addresses (BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS): for
	// receivers inside the network, and tests. Off, they reach public
	// addresses only.
	WebhookAllowPrivateNetworks bool
	// MaxEndUsersPerEnv bounds the end users kept per environment;
	// DefaultMaxEndUsersPerEnv when zero.
	MaxEndUsersPerEnv int64
	// Now is the clock single sign-on attempts expire by; time.Now when
	// nil. Tests move it to see an attempt expire.
	Now func() time.Time
	// BaseURL is the pages' public address (BUNTING_BASE_URL), for the
	// links in messages sent elsewhere (a Slack webhook's text); empty,
	// they are paths.
	BaseURL string
}

// New returns a Core over pool using keys derived from the server secret;
// sql/store.New builds the seams on it.
func New(pool *pgxpool.Pool, keys Keys, log *slog.Logger, opts Options) *Core {
	if opts.PasswordCost == 0 {
		opts.PasswordCost = 12
	}
	if opts.PasswordCost < bcrypt.MinCost {
		opts.PasswordCost = bcrypt.MinCost
	}
	if opts.SessionTTL == 0 {
		opts.SessionTTL = SessionLifetime
	}
	if opts.LoginDelayStep == 0 {
		opts.LoginDelayStep = 250 * time.Millisecond
	}
	if opts.MaxEndUsersPerEnv <= 0 {
		opts.MaxEndUsersPerEnv = DefaultMaxEndUsersPerEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Core{Pool: pool, Q: Queries(pool), ServerKeys: keys, Log: log,
		PasswordCost: opts.PasswordCost, SessionTTL: opts.SessionTTL, LoginDelayStep: opts.LoginDelayStep,
		SSOPrivateNetworks: opts.AllowPrivateNetworks, WebhookPrivateNetworks: opts.WebhookAllowPrivateNetworks, access: &accessWatch{}, changes: feed.NewNotifier(),
		MaxEndUsersPerEnv: opts.MaxEndUsersPerEnv, Now: opts.Now, BaseURL: strings.TrimRight(opts.BaseURL, "/"),
		commits: make(chan struct{}, 1), OutboxKick: make(chan struct{}, 1)}
	return s
}

// AllowPrivateNetworks tells whether providers may be reached on loopback and
// private addresses; the outbound HTTP client must apply the same setting.
func (s *Core) AllowPrivateNetworks() bool { return s.SSOPrivateNetworks }

// ConfigurePool sets what every connection to Bunting's database needs.
// Connecting gives up after ten seconds, so an unreachable database answers
// 503 promptly instead of holding requests. JSON columns read into
// json.RawMessage are copied as they come (readJSON).
func ConfigurePool(cfg *pgxpool.Config) {
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > 10*time.Second {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		m := conn.TypeMap()
		// uuid.UUID as PostgreSQL's uuid, both ways: without it pgx sends
		// each one through its text form after a failed binary attempt, a
		// tenth of a flag search's CPU time.
		pgxuuid.Register(m)
		m.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
		m.RegisterType(&pgtype.Type{Name: "json", OID: pgtype.JSONOID, Codec: &pgtype.JSONCodec{Marshal: json.Marshal, Unmarshal: readJSON}})
		m.RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID, Codec: &pgtype.JSONBCodec{Marshal: json.Marshal, Unmarshal: readJSON}})
		if next != nil {
			return next(ctx, conn)
		}
		return nil
	}
}

// uuidCodec is pgxuuid's codec, which also reads a uuid column straight into
// a uuid.UUID: pgx tries a target's sql.Scanner before the wrapping pgxuuid
// registers for reading, and uuid.UUID's Scanner parses the text pgx makes
// of the 16 bytes first, two allocations and a parse a column, a tenth of
// what reading a flag allocated.
type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, (*pgxuuid.UUID)(nil)); next != nil {
			return scanUUID{next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

// scanUUID reads into a uuid.UUID as into pgxuuid's UUID, the same 16 bytes.
// A NULL leaves it as it was, as uuid.UUID's Scanner does.
type scanUUID struct{ next pgtype.ScanPlan }

func (p scanUUID) Scan(src []byte, dst any) error {
	if src == nil {
		return nil
	}
	return p.next.Scan(src, (*pgxuuid.UUID)(dst.(*uuid.UUID)))
}

// readJSON decodes a JSON value PostgreSQL sent. The server only ever sends
// valid JSON, so a json.RawMessage (every JSON column sqlc reads) takes a
// copy of the bytes without the validation encoding/json would repeat: a
// flag read spent a tenth of its CPU time there.
func readJSON(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// Keys returns the keys derived from the server secret.
func (s *Core) Keys() Keys { return s.ServerKeys }

// Ping checks that the database answers.
func (s *Core) Ping(ctx context.Context) error { return Translate(s.Pool.Ping(ctx)) }

// InTx runs fn in one transaction: every mutation and its audit entry commit
// together or not at all.
func (s *Core) InTx(ctx context.Context, fn func(q *db.Queries) error) error {
	changes := s.access.localChanges()
	watch := s.WatchCommit()
	err := Translate(runTx(ctx, s.Pool, func(tx db.DBTX) error { return fn(Queries(tx)) }))
	if err == nil {
		s.Committed(watch)
	}
	if s.access.localChanges() != changes {
		// Access changed in this (or a concurrent) transaction: readers may
		// have cached the old state between the change and its commit.
		s.access.moved()
	}
	return err
}
