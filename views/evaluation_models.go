package views

// EvaluationsTab is a flag's Insights tab: how often SDKs were served each
// variation over a span, as a chart and as a table.
type EvaluationsTab struct {
	// Spans link to the last hour, day and 30 days; the shown one is Active.
	Spans []Tab
	Chart EvaluationChart
}

// EvaluationChart is a chart drawn on the server: one line per variation
// in an SVG of Width × Height, its axes' labels, and the same numbers as
// a table for those who cannot see the chart.
type EvaluationChart struct {
	// Title names the chart and its span; Summary says the totals in words.
	Title, Summary string
	Width, Height  int
	Lines          []ChartLine
	XLabels        []ChartLabel
	YLabels        []ChartLabel
	// Left, Right, Top and Bottom are the plot's edges, for the axes.
	Left, Right, Top, Bottom int
	// Columns are the variations' names, the table's columns after the time.
	Columns []string
	// Rows are the steps with any evaluation, oldest first.
	Rows   []ChartRow
	Totals []int64
	Total  int64
	// Zone names the times' zone as the server writes them ("UTC"); Local
	// when the page's script may show them in the viewer's zone instead.
	Zone  string
	Local bool
	// PreviousPoints is the span before's line of all evaluations, dashed
	// ("" when there were none); PreviousLabel names that span, and
	// Comparison says this span's total against PreviousTotal in words.
	PreviousPoints, PreviousLabel, Comparison string
	PreviousTotal                             int64
	// TotalPoints is this span's line of all evaluations, drawn to compare
	// with the span before when there are several variations; "" otherwise.
	TotalPoints string
	// Buckets are each step's hover and focus target with its tooltip.
	Buckets []ChartBucket
	// Markers are the flag's changes within the span, on the time axis;
	// HistoryHref is the flag's history, where each is told whole.
	Markers     []ChartMarker
	HistoryHref string
}

// ChartTime is a time as the server writes it (Text, in UTC) and, when the
// page's script may show it in the viewer's time zone, At (RFC 3339) and
// Format, how: "time", "datetime" or "row".
type ChartTime struct {
	Text, At, Format string
}

// ChartBucket is one step of a chart: the band from X, Width wide, that
// shows its tooltip on hover, and on focus when Focusable (steps with any
// evaluation, so the keyboard does not stop at empty ones).
type ChartBucket struct {
	ID        string
	X, Width  int
	Focusable bool
	Tip       ChartTip
}

// ChartTip is a tooltip's box at X, Y, Width × Height: its time, then its
// lines.
type ChartTip struct {
	X, Y, Width, Height int
	Time                ChartTime
	Lines               []string
}

// ChartMarker is one of the flag's changes on the time axis at X: what
// changed, who changed it and why.
type ChartMarker struct {
	ID             string
	X              int
	What, Who, Why string
	When           ChartTime
	Tip            ChartTip
}

// ChartLine is one variation's line: its points as SVG "x,y x,y …" and its
// colour's class.
type ChartLine struct {
	Name, Class, Points string
	Total               int64
}

// ChartLabel is an axis label at X, Y (its gridline's position).
type ChartLabel struct {
	X, Y int
	Text string
	Time ChartTime
}

// ChartRow is one step of the table: when it started and each variation's count.
type ChartRow struct {
	When   ChartTime
	Counts []int64
	Total  int64
}

// Sparkline is a flag list row's small trend: Points across Width × Height,
// and Label, what it shows in words.
type Sparkline struct {
	Points        string
	Label         string
	Width, Height int
}
