package flagstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// MaxStageScan is how many flags a list filtered by stage reads at most.
// A stage is read from each flag's targeting, which no index holds, so such
// a list reads the matches of its other filters a full page at a time (two
// statements a page) and keeps those at the stage; past this many it stops,
// and says its total is an estimate. The unfiltered list is not affected.
const MaxStageScan = 2_000

// listByStage is ListFlags filtered by stage (FlagFilter.Stage): the other
// filters' matches, in their order, at the stage. The flags ready to remove
// are the active ones first, then the archived ones.
func (s *Flags) listByStage(ctx context.Context, a *core.Actor, envID uuid.UUID, f FlagFilter) (core.Paged[FlagListItem], error) {
	want, page := f.Stage, f.Page
	f.Stage, f.Order = "", map[bool]string{true: "desc", false: "asc"}[f.descending]
	keep := func(it FlagListItem) bool {
		if want == ReadyToRemoveFilter {
			return it.ReadyToRemove
		}
		return string(it.Stage) == want
	}
	archived := []bool{f.IsArchived}
	switch want {
	case string(StageArchived):
		archived = []bool{true}
	case ReadyToRemoveFilter:
		archived = []bool{false, true}
	}
	var (
		matched = []FlagListItem{} // an empty page is an empty list, not null
		read    int
		out     core.Paged[FlagListItem]
	)
	for _, arch := range archived {
		g := f
		g.IsArchived = arch
		for i := 0; read < MaxStageScan; i++ {
			g.Page = core.Page{Index: i, Size: core.MaxPageSize}
			list, err := s.ListFlags(ctx, a, envID, g)
			if err != nil {
				return core.Paged[FlagListItem]{}, err
			}
			for _, it := range list.Items {
				if keep(it) {
					matched = append(matched, it)
				}
			}
			read += len(list.Items)
			if len(list.Items) < core.MaxPageSize {
				break
			}
			if read >= MaxStageScan {
				out.TotalCountIsEstimate = true
			}
		}
	}
	out.TotalCount = int64(len(matched))
	from := min(len(matched), int(page.Offset()))
	out.Items = matched[from:min(len(matched), from+int(page.Limit()))]
	return out, nil
}
