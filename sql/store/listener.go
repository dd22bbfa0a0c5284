package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// listener holds the process's one listening connection, for every channel
// the store listens on, and reconnects after a loss with one back-off. The
// change notifier and the actor cache subscribe to it, each to its channel.
type listener struct {
	pool     *pgxpool.Pool
	log      *slog.Logger
	channels []channel
}

// channel is one subscriber of the listening connection.
type channel struct {
	name string
	// up is told when listening begins (on, with when the loss of the last
	// connection began: what was sent since went unseen) and when it ends.
	up func(on bool, lost time.Time)
	// notified handles one notification's payload.
	notified func(payload string)
}

// Listen listens on every channel of the store until ctx ends, reconnecting
// after a lost connection: until it listens, changes made by other
// instances go unseen, so the change notifier is not Live and actors are
// authorized from the database. Run it once per process.
func (s *Store) Listen(ctx context.Context) { s.listener.run(ctx) }

func (l *listener) run(ctx context.Context) {
	lost := time.Now()
	wait := 100 * time.Millisecond
	for {
		err := l.listen(ctx, lost, func() { wait = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		lost = time.Now()
		l.log.Warn("notifications interrupted; reconnecting, caching nothing meanwhile", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listen holds one connection, outside the pool so that closing the pool
// never waits for it, until it fails or ctx ends.
func (l *listener) listen(ctx context.Context, lost time.Time, connected func()) error {
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	// One statement a channel: the last one is the connection's query in
	// pg_stat_activity, by which operators (and a test) find the listener.
	for _, ch := range l.channels {
		if _, err := conn.Exec(ctx, "LISTEN "+ch.name); err != nil {
			return err
		}
	}
	for _, ch := range l.channels {
		ch.up(true, lost)
		defer ch.up(false, time.Time{})
	}
	connected()
	for {
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		for _, ch := range l.channels {
			if ch.name == msg.Channel {
				ch.notified(msg.Payload)
			}
		}
	}
}
