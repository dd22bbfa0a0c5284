package server

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
)

// Tracers are the pgx tracers the server's pool is given: the benchmark's
// query counter, the metrics' statement errors, and whatever else watches
// statements. Each is added on its own line where it is made, so one more
// is one more line.
type Tracers []pgx.QueryTracer

// Tracer is the one tracer pgx takes for the list: nil when it is empty,
// the tracer itself when there is one, else pgx's multitracer, which calls
// each (batch, copy, connect and pool tracers too, where they implement
// those).
func (ts Tracers) Tracer() pgx.QueryTracer {
	var set []pgx.QueryTracer
	for _, t := range ts {
		if t != nil {
			set = append(set, t)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return multitracer.New(set...)
}
