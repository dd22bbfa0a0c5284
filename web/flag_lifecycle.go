package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// flagLifecycle is archiving, restoring or deleting a flag.
type flagLifecycle struct {
	lifecycle
	consequences func(f flagstore.Flag) []string
	do           func(p *pages, c echo.Context, w workEnv, key string, ch flagstore.Change) error
	// to is where the browser goes after the change.
	to func(key string) string
}

var (
	archiveFlag = flagLifecycle{lifecycle: lifecycle{verb: "Archive", button: "Archive flag", danger: true, action: access.ArchiveFlag, done: "archived"},
		consequences: func(f flagstore.Flag) []string {
			return []string{"SDKs no longer receive the flag: code asking for it gets its fallback value.",
				"It leaves the list of active flags; you can restore it, or then delete it."}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch flagstore.Change) error {
			_, err := p.store.Flags().ArchiveFlag(c.Request().Context(), actor(c), w.id, key, ch)
			return err
		},
		to: func(key string) string { return flagHref(key) + "/settings" }}
	restoreFlag = flagLifecycle{lifecycle: lifecycle{verb: "Restore", button: "Restore flag", action: access.RestoreFlag, done: "restored"},
		consequences: func(f flagstore.Flag) []string {
			return []string{fmt.Sprintf("SDKs receive the flag again; it is %s, as it was when archived.", strings.ToLower(onOffWord(f.IsEnabled)))}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch flagstore.Change) error {
			_, err := p.store.Flags().RestoreFlag(c.Request().Context(), actor(c), w.id, key, ch)
			return err
		},
		to: func(key string) string { return flagHref(key) + "/settings" }}
	deleteFlag = flagLifecycle{lifecycle: lifecycle{verb: "Delete", button: "Delete flag", danger: true, action: access.DeleteFlag, done: "deleted"},
		consequences: func(f flagstore.Flag) []string {
			return []string{"The flag, its targeting and its revisions are deleted for good; this cannot be undone.",
				"Its history stays in the environment's audit log."}
		},
		do: func(p *pages, c echo.Context, w workEnv, key string, ch flagstore.Change) error {
			return p.store.Flags().DeleteFlag(c.Request().Context(), actor(c), w.id, key, ch)
		},
		to: func(string) string { return "/flags?archived=1" }}
)

// confirmFlag asks before archiving, restoring or deleting a flag.
func (p *pages) confirmFlag(l flagLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error { return p.confirmFlagPage(c, l, http.StatusOK, nil) }
}

func (p *pages) confirmFlagPage(c echo.Context, l flagLifecycle, status int, posted *views.Form) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	f, err := p.store.Flags().GetFlag(c.Request().Context(), actor(c), w.id, c.Param("key"))
	if err != nil {
		return err
	}
	href := flagHref(f.Key)
	return p.confirm(c, w, confirmation{lifecycle: l.lifecycle, nav: navFlags, href: href,
		page: views.ChangeConfirm{Crumbs: []views.Crumb{{Label: "Feature flags", Href: "/flags"}, {Label: f.Name, Href: href}},
			Heading: subjectHeading(l.lifecycle, "flag", f.Name), Consequences: l.consequences(f)},
		values:    map[string]string{"revision": f.Revision.String()},
		permitted: w.rights.Flag(f.Key, f.Tags, f.IsArchived).Permits(l.action)}, status, posted)
}

// changeFlagLifecycle archives, restores or deletes a flag, as confirmed.
func (p *pages) changeFlagLifecycle(l flagLifecycle) echo.HandlerFunc {
	return func(c echo.Context) error {
		w, err := actingEnv(c)
		if err != nil {
			return err
		}
		key := c.Param("key")
		return p.changeLifecycle(c, l.lifecycle, flagHref(key), fmt.Sprintf("Feature flag “%s” %s.", key, l.done),
			func() string { return l.to(key) },
			func(ch flagstore.Change) error { return l.do(p, c, w, key, ch) },
			func(status int, posted *views.Form) error { return p.confirmFlagPage(c, l, status, posted) })
	}
}
