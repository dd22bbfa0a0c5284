package store

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

// check adds the paging problems to v.
func (p Page) check(v *validator) {
	if p.Index < 0 || p.Index > 1<<20 {
		v.add("pageIndex", "invalid")
	}
	if p.Size < 1 || p.Size > MaxPageSize {
		v.add("pageSize", "invalid")
	}
}

func (p Page) limit() int32  { return int32(p.Size) }
func (p Page) offset() int32 { return int32(p.Index * p.Size) }

// Paged is one page of a list and the size of the whole list.
type Paged[T any] struct {
	TotalCount int64 `json:"totalCount"`
	Items      []T   `json:"items"`
}
