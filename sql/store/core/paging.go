package core

// Paging bounds: a list answers DefaultPageSize items unless asked, and at
// most MaxPageSize.
const (
	DefaultPageSize = 10
	MaxPageSize     = 100
)

// Page selects one page of a list: PageIndex from 0, PageSize 1‥100.
type Page struct {
	Index int
	Size  int
}

// Check adds the paging problems to v.
func (p Page) Check(v *Validator) {
	if p.Index < 0 || p.Index > 1<<20 {
		v.Add("pageIndex", "invalid")
	}
	if p.Size < 1 || p.Size > MaxPageSize {
		v.Add("pageSize", "invalid")
	}
}

func (p Page) Limit() int32  { return int32(p.Size) }
func (p Page) Offset() int32 { return int32(p.Index * p.Size) }

// Paged is one page of a list and the size of the whole list.
type Paged[T any] struct {
	TotalCount int64 `json:"totalCount"`
	// TotalCountIsEstimate is true when the list stopped counting: there
	// are at least TotalCount items (flag lists past MaxExactFlagCount).
	TotalCountIsEstimate bool `json:"totalCountIsEstimate,omitempty"`
	Items                []T  `json:"items"`
}

// paged makes one page of a list from its rows (with the error of the query
// that read them) and the count of every match, the two queries each paged
// list runs. The items are never null.
func PageOf[R, T any](rows []R, err error, item func(R) T, count func() (int64, error)) (Paged[T], error) {
	if err != nil {
		return Paged[T]{}, Translate(err)
	}
	out := Paged[T]{Items: make([]T, len(rows))}
	for i, r := range rows {
		out.Items[i] = item(r)
	}
	if out.TotalCount, err = count(); err != nil {
		return Paged[T]{}, Translate(err)
	}
	return out, nil
}

// PageOfCounted is paged for a statement whose every row carries the count
// of all it matches (count(*) OVER ()): only an empty page, past the last
// match or of none, leaves count to say how many there are.
func PageOfCounted[R, T any](rows []R, err error, item func(R) (T, int64), count func() (int64, error)) (Paged[T], error) {
	if err != nil {
		return Paged[T]{}, Translate(err)
	}
	if len(rows) == 0 {
		total, err := count()
		if err != nil {
			return Paged[T]{}, Translate(err)
		}
		return Paged[T]{Items: []T{}, TotalCount: total}, nil
	}
	out := Paged[T]{Items: make([]T, len(rows))}
	for i, r := range rows {
		out.Items[i], out.TotalCount = item(r)
	}
	return out, nil
}

// PageOfChecked is PageOf for rows whose items can fail to be made (a
// stored document that no longer decodes).
func PageOfChecked[R, T any](rows []R, err error, item func(R) (T, error), count func() (int64, error)) (Paged[T], error) {
	if err != nil {
		return Paged[T]{}, Translate(err)
	}
	out := Paged[T]{Items: make([]T, len(rows))}
	for i, r := range rows {
		if out.Items[i], err = item(r); err != nil {
			return Paged[T]{}, err
		}
	}
	if out.TotalCount, err = count(); err != nil {
		return Paged[T]{}, Translate(err)
	}
	return out, nil
}
