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
}

// ChartRow is one step of the table: when it started and each variation's count.
type ChartRow struct {
	When   string
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
