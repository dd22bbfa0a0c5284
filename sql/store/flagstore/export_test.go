package flagstore

import "time"

// PretendFlagTableIsBig makes a search take the two statements of a big
// table (flag_search.go) for the next hour, so a test can compare them with
// the one statement of a small table on the same data.
func (s *Flags) PretendFlagTableIsBig() {
	s.flagTable.rows.Store(smallFlagTable + 1)
	s.flagTable.read.Store(time.Now().Add(time.Hour).UnixNano())
}
