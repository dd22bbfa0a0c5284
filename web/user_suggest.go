package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
	"github.com/bunting-flags/bunting/views"
)

// suggestHref answers the end users a user-key field suggests.
const suggestHref = "/end-users/suggest"

// maxUserSuggestions bounds the end users a user-key field offers at once:
// enough to choose from while typing, few enough to read.
const maxUserSuggestions = 20

// suggestEndUsers answers the options of a user-key field's listbox: the
// working environment's end users whose key or name matches q as the
// end-user list's search does, most recently seen first. The store checks
// that the person may read the environment, as for the list. An empty or
// too long word, or no working environment, suggests nobody.
func (p *pages) suggestEndUsers(c echo.Context) error {
	w, ok := workEnvOf(c)
	q := strings.TrimSpace(c.QueryParam("q"))
	if !ok || q == "" {
		return render(c, http.StatusOK, views.EndUserSuggestions(nil))
	}
	users, err := p.store.SDK().SearchEndUsers(c.Request().Context(), actor(c), w.id,
		sdkdata.EndUserSearchFilter{SearchText: q, Limit: maxUserSuggestions})
	var invalid *core.ValidationError
	if errors.As(err, &invalid) {
		return render(c, http.StatusOK, views.EndUserSuggestions(nil))
	}
	if err != nil {
		return err
	}
	out := make([]views.EndUserSuggestion, 0, len(users))
	for _, u := range users {
		s := views.EndUserSuggestion{Key: u.KeyID}
		if u.Name != nil && *u.Name != u.KeyID {
			s.Name = *u.Name
		}
		out = append(out, s)
	}
	return render(c, http.StatusOK, views.EndUserSuggestions(out))
}
