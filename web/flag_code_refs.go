package web

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// A flag's code references: where bunting coderefs found its key used.

// tabCode lists a flag's code references.
const tabCode = "code"

// flagCode shows where a flag's key is used in code.
func (p *pages) flagCode(c echo.Context) error { return p.flagPage(c, tabCode, flagState{}) }

// codeRefsTab groups a flag's references by repository and branch, in
// the store's order.
func (p *pages) codeRefsTab(c echo.Context, w workEnv, key string) (views.CodeRefsTab, error) {
	refs, err := p.store.Flags().FlagCodeRefs(c.Request().Context(), actor(c), w.id, key)
	if err != nil {
		return views.CodeRefsTab{}, err
	}
	var t views.CodeRefsTab
	for _, r := range refs {
		n := len(t.Groups)
		if n == 0 || t.Groups[n-1].Repository != r.Repository || t.Groups[n-1].Branch != r.Branch {
			t.Groups = append(t.Groups, views.CodeRefGroup{Repository: r.Repository, Branch: r.Branch,
				Commit: shortCommit(r.Commit), When: when(r.UploadedAt)})
			n++
		}
		t.Count++
		t.Groups[n-1].Places = append(t.Groups[n-1].Places, views.CodeRefPlace{Place: fmt.Sprintf("%s:%d", r.Path, r.Line), Snippet: r.Snippet})
	}
	return t, nil
}

// codeRefsCount says how many places in code use a flag's key, "" for none.
func (p *pages) codeRefsCount(c echo.Context, w workEnv, key string) (string, error) {
	counts, err := p.store.Flags().CodeRefCounts(c.Request().Context(), actor(c), w.id, []string{key})
	if err != nil || counts[key] == 0 {
		return "", err
	}
	return fmt.Sprintf("%d %s", counts[key], plural(counts[key], "reference", "references")), nil
}

// shortCommit is a commit's first 12 characters, as git shows one.
func shortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// archivedInCode counts the code references of the archived flags of a
// list page, in one query: an archived flag still used stands out.
func (p *pages) archivedInCode(c echo.Context, w workEnv, items []flagstore.FlagListItem) (map[string]int, error) {
	var keys []string
	for _, f := range items {
		if f.IsArchived {
			keys = append(keys, f.Key)
		}
	}
	return p.store.Flags().CodeRefCounts(c.Request().Context(), actor(c), w.id, keys)
}
