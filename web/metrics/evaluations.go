package metrics

// Source is where evaluations are counted from.
type Source uint8

// Sources of evaluations.
const (
	OFREPSingle Source = iota // POST /ofrep/v1/evaluate/flags/{key}
	OFREPBulk                 // POST /ofrep/v1/evaluate/flags
	Insight                   // evaluations SDKs report to /api/public/insight/track
	numSources
)

func (s Source) String() string {
	return [...]string{"ofrep_single", "ofrep_bulk", "insight"}[s]
}

// Outcome is the kind of an evaluation's outcome: a bounded set, whatever
// flags and clients there are.
type Outcome uint8

// Outcomes of evaluations.
const (
	// Served: a variation was served (OFREP), or reported (insight).
	Served Outcome = iota
	// FlagNotFound: OFREP was asked for a flag the environment lacks.
	FlagNotFound
	// InvalidContext: OFREP's evaluation context was missing or malformed.
	InvalidContext
	// Failed: the flag could not be served (no variation, or a value that
	// does not parse as its type).
	Failed
	numOutcomes
)

func (o Outcome) String() string {
	return [...]string{"served", "flag_not_found", "invalid_context", "error"}[o]
}

// Evaluated counts n evaluations of one source and outcome: callers count
// a request's evaluations together, once per request, not once per flag.
func (m *Metrics) Evaluated(s Source, o Outcome, n int) {
	if m != nil && n > 0 {
		m.evaluations[s][o].Add(float64(n))
	}
}
