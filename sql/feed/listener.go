package feed

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgxlisten"

	"github.com/bunting-flags/bunting/sql/db"
)

// changesChannel wakes the outbox's readers (AnnounceChanges sends on it).
const changesChannel = "bunting_changes"

// ApplicationName names the listening connection in pg_stat_activity, where
// operators (and a test) find it.
const ApplicationName = "bunting listener"

// Channel is another channel the listening connection listens on: the store's
// actor cache follows access changes on one.
type Channel struct {
	Name string
	// Up is told when listening begins and when it ends: what was sent
	// while nobody listened went unseen.
	Up func(on bool)
	// Notified handles a notification.
	Notified func()
}

// Config is what a Listener serves, as the store gives it (store.Feed).
type Config struct {
	Pool *pgxpool.Pool
	// Changes is the notifier the changes read are published to.
	Changes *Notifier
	// Committed is signalled after a transaction that recorded changes
	// commits on this instance: they are then announced.
	Committed <-chan struct{}
	Channels  []Channel
	Log       *slog.Logger
}

// Options tune a Listener; the zero value is production-ready.
type Options struct {
	// Poll is how often the outbox is read when no notification wakes the
	// reader; two seconds when zero.
	Poll time.Duration
	// Keep is how long the outbox keeps a change; an hour when zero. A
	// reader away longer starts over with an EventReset.
	Keep time.Duration
	// ReconnectDelay is the wait before listening again after the
	// connection was lost; a second when zero.
	ReconnectDelay time.Duration
	// From is where to start reading: a Position of an earlier run. Empty,
	// the reader starts now, with an EventReset.
	From string
}

// Listener reads the outbox for one instance, announces this instance's
// commits, and keeps the listening connection of every channel. Run it once
// per process.
type Listener struct {
	cfg  Config
	opts Options
	q    *db.Queries
	wake chan struct{}

	// mu orders reads: one at a time, each from where the last stopped.
	mu       sync.Mutex
	position string
	// readAt is when the read that took position began; zero for
	// Options.From, whose time is not known.
	readAt time.Time

	connMu sync.Mutex
	conn   int // counts connections; only the current one's loss counts
}

// NewListener returns a listener of cfg's channels and outbox.
func NewListener(cfg Config, opts Options) *Listener {
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Keep <= 0 {
		opts.Keep = time.Hour
	}
	if opts.ReconnectDelay == 0 {
		opts.ReconnectDelay = time.Second
	}
	l := &Listener{cfg: cfg, opts: opts, q: db.New(cfg.Pool), wake: make(chan struct{}, 1), position: opts.From}
	if opts.From == "" {
		l.readAt = time.Now()
	}
	return l
}

// Position is where the reader stopped: Options.From of a later run that
// must see every change made since.
func (l *Listener) Position() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.position
}

// Run listens, reads and announces until ctx ends. Until it listens,
// changes made by other instances reach this one only as often as
// Options.Poll, so the notifier is not Live and actors are authorized from
// the database.
func (l *Listener) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { l.announce(ctx) })
	wg.Go(func() { l.read(ctx) })
	pl := &pgxlisten.Listener{Connect: l.connect, ReconnectDelay: l.opts.ReconnectDelay,
		LogError: func(ctx context.Context, err error) {
			if ctx.Err() == nil {
				l.cfg.Log.Warn("notifications interrupted; reconnecting, caching nothing meanwhile", "err", err)
			}
		}}
	pl.Handle(changesChannel, changesHandler{l})
	for _, ch := range l.cfg.Channels {
		pl.Handle(ch.Name, channelHandler{ch})
	}
	_ = pl.Listen(ctx) // until ctx ends
	l.lost(-1)
}

// connect takes a connection out of the pool, so that closing the pool
// never waits for it; pgxlisten closes it when it fails or ctx ends. Its
// loss stops every channel at once, whichever way it ends.
func (l *Listener) connect(ctx context.Context) (*pgx.Conn, error) {
	pc, err := l.cfg.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "SET application_name = '"+ApplicationName+"'"); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	l.connMu.Lock()
	l.conn++
	n := l.conn
	l.connMu.Unlock()
	go func() {
		<-conn.PgConn().CleanupDone()
		l.lost(n)
	}()
	return conn, nil
}

// lost stops the channels when connection n (-1: whichever) is gone.
func (l *Listener) lost(n int) {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	if n != -1 && n != l.conn {
		return
	}
	l.cfg.Changes.setLive(false)
	for _, ch := range l.cfg.Channels {
		ch.Up(false)
	}
}

// changesHandler reads the outbox when the connection listens and when
// woken.
type changesHandler struct{ l *Listener }

// HandleBacklog reads what was missed while nobody listened before the
// notifier goes live; a failed read drops the connection, to listen and
// read again after the reconnection delay.
func (h changesHandler) HandleBacklog(ctx context.Context, _ string, conn *pgx.Conn) error {
	if err := h.l.catchUp(ctx); err != nil {
		conn.Close(ctx)
		return err
	}
	h.l.cfg.Changes.setLive(true)
	return nil
}

// HandleNotification wakes the reader, which reads on another connection:
// the listening one keeps taking notifications meanwhile.
func (h changesHandler) HandleNotification(context.Context, *pgconn.Notification, *pgx.Conn) error {
	select {
	case h.l.wake <- struct{}{}:
	default:
	}
	return nil
}

// channelHandler serves one of Config.Channels.
type channelHandler struct{ ch Channel }

func (h channelHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.ch.Up(true)
	return nil
}

func (h channelHandler) HandleNotification(context.Context, *pgconn.Notification, *pgx.Conn) error {
	h.ch.Notified()
	return nil
}

// read reads the outbox when woken and every Poll, and prunes it now and
// then (any instance may).
func (l *Listener) read(ctx context.Context) {
	tick := time.NewTicker(l.opts.Poll)
	defer tick.Stop()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-tick.C:
		}
		if err := l.catchUp(ctx); err != nil && ctx.Err() == nil {
			l.cfg.Log.Warn("changes: reading the outbox failed", "err", err)
		}
		if time.Since(pruned) > l.opts.Keep/4 {
			if err := l.q.PruneChanges(ctx, time.Now().Add(-l.opts.Keep)); err != nil && ctx.Err() == nil {
				l.cfg.Log.Warn("changes: pruning the outbox failed", "err", err)
			}
			pruned = time.Now()
		}
	}
}

// catchUp publishes the changes committed since the last read, in order.
func (l *Listener) catchUp(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	began := time.Now()
	if l.position == "" {
		position, err := l.q.ChangesPosition(ctx)
		if err != nil {
			return err
		}
		l.position, l.readAt = position, began
		l.cfg.Changes.publish(Event{Kind: EventReset, Since: began})
		return nil
	}
	row, err := l.q.ChangesSince(ctx, l.position)
	if err != nil {
		return err
	}
	if row.Missed {
		l.cfg.Changes.publish(Event{Kind: EventReset, Since: l.readAt})
	} else {
		for _, raw := range row.Events {
			var ev Event
			if err := json.Unmarshal([]byte(raw), &ev); err != nil || ev.Kind == "" {
				l.cfg.Log.Warn("changes: ignoring a malformed change", "event", raw)
				continue
			}
			l.cfg.Changes.publish(ev)
		}
	}
	l.position, l.readAt = row.NextPosition, began
	return nil
}

// announce notifies every instance's reader after this instance's commits:
// one notification for all those that committed while the last was sent.
func (l *Listener) announce(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.cfg.Committed:
		}
		if err := l.q.AnnounceChanges(ctx); err != nil && ctx.Err() == nil {
			// Readers still find the changes at their next poll.
			l.cfg.Log.Warn("changes: announcing failed", "err", err)
		}
	}
}
