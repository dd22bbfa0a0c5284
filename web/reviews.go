package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// reviews is the reviews inbox: the change requests waiting for the
// person's review in every environment of the organization, oldest first.
// One in the working environment opens directly; one elsewhere opens
// through the context switch, which makes its environment the working one.
func (p *pages) reviews(c echo.Context) error {
	list, err := p.store.Governance().ReviewsWaiting(c.Request().Context(), actor(c))
	if err != nil {
		return err
	}
	w, _ := workEnvOf(c)
	now := time.Now()
	vm := views.Reviews{}
	for _, r := range list {
		who := r.CreatorName
		if who == "" {
			who = r.CreatorMail
		}
		at := r.CreatedAt
		item := views.ReviewItem{Flag: r.FlagName, Reason: r.Reason, Env: r.ProjectName + " / " + r.EnvName, Who: who,
			Age: evaluatedAgo(&at, now), When: when(r.CreatedAt)}
		if r.EnvID == w.id {
			item.Href = changeRequestHref(r.ID)
		} else {
			item.EnvID, item.Next = r.EnvID.String(), changeRequestHref(r.ID)
		}
		vm.Items = append(vm.Items, item)
	}
	if vm.Shell, err = p.shell(c, "Reviews", navReviews); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ReviewsPage(vm))
}

// review opens the change request a link names by its id alone (a
// webhook's message): directly when it is in the working environment,
// else through a button that switches to its environment.
func (p *pages) review(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	at, err := p.store.Governance().ChangeRequestPlace(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	if w, ok := workEnvOf(c); ok && w.id == at.EnvID {
		return c.Redirect(http.StatusSeeOther, changeRequestHref(id))
	}
	vm := views.ReviewElsewhere{Env: at.ProjectName + " / " + at.EnvName, EnvID: at.EnvID.String(), Next: changeRequestHref(id)}
	if vm.Shell, err = p.shell(c, "Change request", navReviews); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ReviewElsewherePage(vm))
}
