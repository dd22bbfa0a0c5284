package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/views"
)

// listPageSize is how many flags, segments or history entries a page shows.
const listPageSize = 20

// when shows a time of the history.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// pageNumber reads a page number from 1; anything else is 0, which the
// store refuses as pageIndex_is_invalid.
func pageNumber(s string) int {
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// lastPage is the number of a list's last page, 1 when it is empty.
func lastPage(total int64, size int) int {
	return max(1, int((total+int64(size)-1)/int64(size)))
}

// pager moves between the pages of a list of total things, size a page,
// from page number (from 1); href is a page's address.
func pager(total int64, number, size int, noun, nouns string, href func(int) string) views.Pager {
	last := lastPage(total, size)
	pg := views.Pager{Label: fmt.Sprintf("Page %d of %d · %d %s", number, last, total, plural(int(total), noun, nouns))}
	if number > 1 {
		pg.Prev = href(min(number-1, last))
	}
	if number < last {
		pg.Next = href(number + 1)
	}
	return pg
}
