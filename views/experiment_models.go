package views

// Experiments is the Experiments page of the working environment: how many
// experiments are in each state, the list (filtered by the flag's name), and
// where to create one.
type Experiments struct {
	Shell
	Env WorkEnv
	// Counts are the experiments per status.
	Counts []StatusCount
	List   ExperimentList
	// NewHref starts a new experiment; empty for those who may create none.
	NewHref string
	// MetricsHref is the Metrics page, where an experiment's metric is made.
	MetricsHref string
}

// StatusCount is how many experiments are in one status.
type StatusCount struct {
	Label, TestID string
	Count         int64
}

// ExperimentList is the region of the list that its search and pager swap.
type ExperimentList struct {
	// Query is the flag name searched for.
	Query string
	Rows  []ExperimentRow
	Pager Pager
	// Empty says why the list is empty ("No experiments yet").
	Empty string
}

// ExperimentRow is one experiment in a list: what it tests, how it
// measures, where it stands.
type ExperimentRow struct {
	Href, FlagName, FlagHref, MetricName string
	// EventName names the metric's event ("checkout", "pageview"); Kind
	// says what the metric counts ("Custom event: Conversion").
	EventName, Kind string
	Baseline        string
	Status          Badge
	// Verdict is the experiment's first verdict, on a flag's tab; nil
	// elsewhere and before results.
	Verdict *Verdict
}

// ExperimentNew is the page that starts an experiment: choose its flag
// (Flags, found by Query) and then its metric and baseline (Create).
type ExperimentNew struct {
	Shell
	Env   WorkEnv
	Query string
	// Flags are the flags found, each a link that chooses it.
	Flags []FlagChoice
	// Create is the form once a flag is chosen; nil before.
	Create *ExperimentCreate
}

// FlagChoice is a flag offered as an experiment's subject.
type FlagChoice struct {
	Name, Key, Href string
}

// ExperimentCreate is the form that creates an experiment on one flag: the
// metric it measures, the variation the others are set against, and the
// significance level.
type ExperimentCreate struct {
	Form     Form
	FlagName string
	Metrics  []Option
	// Baselines are the flag's variations.
	Baselines []Option
	// NoMetrics is set when the environment has no metric yet; the form
	// then links to the Metrics page instead.
	NoMetrics   bool
	MetricsHref string
}

// ExperimentPage is one experiment: its flag and metric, its state and the
// buttons that change it, and the results of the chosen iteration.
type ExperimentPage struct {
	Shell
	Main ExperimentMain
}

// ExperimentMain is the part of an experiment's page that its buttons'
// htmx answers replace.
type ExperimentMain struct {
	Crumbs []Crumb
	ID     string
	// FlagName, FlagHref: the flag whose variations are compared.
	FlagName, FlagHref string
	// MetricName, EventName and Kind say what is measured; MetricHref is the
	// metric's page.
	MetricName, EventName, Kind, MetricHref string
	Status                                  Badge
	Baseline, Alpha                         string
	// Actions are Start or Stop, for those who may change the experiment.
	Actions []ExperimentAction
	CSRF    string
	// Iterations link to each recording window, newest first; Period says
	// when the shown one ran.
	Iterations []Tab
	Period     string
	// Results are the shown iteration's; nil before the first start.
	Results *ExperimentResults
	// Problem says why a Start or Stop just failed.
	Problem    string
	NotStarted bool
	Archived   bool
	// ArchiveDataHref and ArchiveHref confirm removing the experiment's data
	// or the experiment; empty for those who may not.
	ArchiveDataHref, ArchiveHref string
}

// ExperimentAction is one of the buttons that change an experiment's state
// (Start, Stop), a form posting to Action.
type ExperimentAction struct {
	Label, Action, TestID string
	Primary               bool
}

// ExperimentResults is one iteration's results: the verdict in words, a
// warning when the split of users is not what the rollout says, the table
// per variation, and the interval of each variation's lift over time.
type ExperimentResults struct {
	// Verdicts say, per variation against the baseline, what the data
	// shows so far, in a sentence.
	Verdicts []Verdict
	// SRM warns of a sample ratio mismatch; empty when there is none.
	SRM string
	// Numeric is set for a metric that sums values (Total events and
	// Average) rather than counting conversions (Conversions and Rate).
	Numeric bool
	Unit    string
	Rows    []ResultRow
	Charts  []IntervalChart
	// Updated says when the results were computed; Note explains the
	// intervals.
	Updated, Note string
	// Empty says that no user has been exposed yet.
	Empty string
}

// Verdict is a sentence about one variation; Kind is "win", "loss" or
// "open", for its colour.
type Verdict struct {
	Text, Kind string
}

// ResultRow is one variation's figures: FeatBit's (users, conversions or
// events, rate or average, lift with its fixed-horizon interval and
// p-value, winner or why not) and Bunting's (the always-valid interval, the
// chance to beat the baseline).
type ResultRow struct {
	Variation  string
	IsBaseline bool
	IsWinner   bool
	Users      string
	// Conversions is "12" for a conversion metric, the total events for a
	// numeric one; Rate the conversion rate or the average.
	Conversions, Rate string
	Lift, Interval    string
	PValue            string
	Sequential        string
	Chance            string
	// FeatBit is FeatBit's verdict on the row: "Winner", "Baseline", or
	// the reason it is not significant.
	FeatBit string
}

// IntervalChart draws one variation's lift over the baseline across the
// iteration: the estimate as a line, its always-valid interval as a band
// around it, and zero (no difference) as a reference line, with the same
// numbers in a table.
type IntervalChart struct {
	ID, Variation, Title, Summary string
	Width, Height                 int
	Left, Right, Top, Bottom      int
	// ZeroY is where a lift of zero lies.
	ZeroY          int
	Band, Line     string
	Class          string
	XLabels        []ChartLabel
	YLabels        []ChartLabel
	Rows           []IntervalRow
	Points         []IntervalPoint
	NotEnoughYet   string
	BaselineName   string
	LatestInterval string
}

// IntervalPoint is one look on the chart, with its tooltip.
type IntervalPoint struct {
	X, Y int
	Tip  ChartTip
}

// IntervalRow is one look at the results: when, how many users the
// variation and the baseline had, the lift and its always-valid interval.
type IntervalRow struct {
	When                        ChartTime
	Users, Lift, Interval, Rate string
}

// Metrics is the Metrics page: the environment's metrics, searchable, and
// the form that creates one.
type Metrics struct {
	Shell
	Env   WorkEnv
	Query string
	Rows  []MetricRow
	Pager Pager
	// Create is nil for those who may not create metrics.
	Create *MetricForm
	Empty  string
}

// MetricRow is one metric in the list.
type MetricRow struct {
	Name, Href, Kind, EventName, Maintainer, Description string
}

// MetricForm creates or edits a metric: its name, the event it counts,
// what it measures (conversions or a numeric value) and which direction
// is better.
type MetricForm struct {
	Form   Form
	Submit string
	// EventTypes, TrackOptions and Criteria are the choices, as FeatBit
	// numbers them.
	EventTypes, TrackOptions, Criteria []Option
	// Editable is false for those who may only read it.
	Editable bool
}

// MetricPage is one metric: its form and the experiments that use it.
type MetricPage struct {
	Shell
	Name        string
	Form        MetricForm
	Experiments []ExperimentRow
	// ArchiveHref archives it after a confirmation; empty for those who
	// may not.
	ArchiveHref string
	Archived    bool
}

// ExperimentsTab is a flag's Experimentation tab: the flag's experiments
// with their state and verdicts, and the form that adds one.
type ExperimentsTab struct {
	Rows     []ExperimentRow
	Create   *ExperimentCreate
	ListHref string
}
