package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/relayproxies"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// The Relay proxies pages: the organization's keys for relays, their
// agents and what each last reported. Who may see and change them is the
// store's rule (ListRelayProxies, ManageRelayProxies).

const navRelayProxies = "relay-proxies"

// staleAgent is how long an auto agent must have been silent before it may
// be removed (FeatBit's UI: five minutes; agents report every minute).
const staleAgent = 5 * time.Minute

// relayProxies lists the organization's relay proxies.
func (p *pages) relayProxies(c echo.Context) error {
	a := actor(c)
	list, err := p.store.RelayProxies().List(c.Request().Context(), a, relayproxies.Filter{Page: core.Page{Size: core.MaxPageSize}})
	if err != nil {
		return err
	}
	vm := views.RelayProxies{Manage: relayproxies.RightsOf(a).Manage}
	for _, rp := range list.Items {
		serves := "Every environment"
		if !rp.IsAllEnvs {
			serves = strings.Join(servesNames(rp.Serves), ", ")
		}
		n := len(rp.Agents) + len(rp.AutoAgents)
		vm.Rows = append(vm.Rows, views.RelayProxyRow{Name: rp.Name, Href: "/relay-proxies/" + rp.ID.String(), Key: rp.Key,
			Serves: serves, Agents: fmt.Sprintf("%d %s", n, plural(n, "agent", "agents"))})
	}
	if vm.Shell, err = p.shell(c, "Relay proxies", navRelayProxies); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RelayProxiesPage(vm))
}

// servesNames are the "{project}/{env}" parts of FeatBit's serves entries.
func servesNames(serves []string) []string {
	out := make([]string, len(serves))
	for i, s := range serves {
		_, name, _ := strings.Cut(s, ",")
		out[i] = strings.ReplaceAll(name, "/", " / ")
	}
	return out
}

// newRelayProxy shows the form that creates a relay proxy.
func (p *pages) newRelayProxy(c echo.Context) error {
	return p.relayPage(c, http.StatusOK, nil, p.form(c, "relay", "/relay-proxies", nil), false, nil, nil)
}

// relayPage renders the new relay proxy's form (rp nil) or a relay proxy's
// page; all and scopes are what the form checks, agentForm the agent form
// as posted (nil: empty).
func (p *pages) relayPage(c echo.Context, status int, rp *relayproxies.Item, f views.Form, all bool, scopes []string, agentForm *views.Form) error {
	ctx := c.Request().Context()
	a := actor(c)
	choices, err := p.store.RelayProxies().Scopes(ctx, a)
	if err != nil {
		return err
	}
	if rp != nil && scopes == nil {
		all, scopes = rp.IsAllEnvs, rp.Scopes
	}
	vm := views.RelayProxyEdit{Form: f, AllEnvs: all, Manage: relayproxies.RightsOf(a).Manage}
	for _, sc := range choices {
		vm.Scopes = append(vm.Scopes, views.Check{Value: sc.EnvID.String(), Label: sc.ProjectName + " / " + sc.EnvName,
			Checked: slices.Contains(scopes, sc.EnvID.String())})
	}
	title := "New relay proxy"
	if rp != nil {
		title, vm.Name, vm.Key = rp.Name, rp.Name, rp.Key
		base := "/relay-proxies/" + rp.ID.String()
		vm.DeleteAction = base + "/delete"
		vm.AgentForm = p.form(c, "relay-agent", base+"/agents", nil)
		if agentForm != nil {
			vm.AgentForm = *agentForm
		}
		for _, ag := range rp.Agents {
			row := views.RelayAgentRow{ID: ag.ID, Name: ag.Name, Host: ag.Host, LastSync: "Never", DataVersion: "—",
				SyncAction: base + "/agents/" + ag.ID + "/sync", RemoveAction: base + "/agents/" + ag.ID + "/remove"}
			if ag.SyncAt != nil {
				row.LastSync = ag.SyncAt.UTC().Format("2006-01-02 15:04:05 UTC")
				row.DataVersion = versionTime(ag.DataVersion)
			}
			vm.Agents = append(vm.Agents, row)
		}
		now := time.Now()
		for _, ag := range rp.AutoAgents {
			vm.AutoAgents = append(vm.AutoAgents, autoAgentRow(base, ag, now))
		}
	}
	if vm.Shell, err = p.shell(c, title, navRelayProxies); err != nil {
		return err
	}
	if rp == nil {
		return render(c, status, views.RelayProxyNewPage(vm))
	}
	return render(c, status, views.RelayProxyPage(vm))
}

// autoAgentRow is an auto agent as its last report describes it.
func autoAgentRow(base string, ag relayproxies.AutoAgent, now time.Time) views.RelayAutoAgentRow {
	st := relayproxies.ParseStatus(ag.Status)
	row := views.RelayAutoAgentRow{ID: ag.ID, SyncState: st.SyncState, LastSync: "Never", DataVersion: "—", Reported: "Not yet",
		Serves: strings.ReplaceAll(st.Serves, ",", ", "), State: views.Badge{Label: "Waiting", Kind: "gray"}}
	switch st.SyncState {
	case "Stable":
		row.State = views.Badge{Label: "Stable", Kind: "green"}
	case "Interrupted":
		row.State = views.Badge{Label: "Interrupted", Kind: "amber"}
	case "Stopped":
		row.State = views.Badge{Label: "Stopped", Kind: "red"}
	case "":
	default:
		row.State = views.Badge{Label: st.SyncState, Kind: "gray"}
	}
	if st.LastSyncedAt != nil {
		row.LastSync = st.LastSyncedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if st.DataVersion > 0 {
		row.DataVersion = versionTime(st.DataVersion)
	}
	seen := ag.RegisteredAt
	if st.ReportedAt != nil {
		seen = *st.ReportedAt
		row.Reported = st.ReportedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if now.Sub(seen) > staleAgent {
		row.RemoveAction = base + "/auto-agents/" + ag.ID + "/remove"
	}
	return row
}

// versionTime is a data version (the newest change's Unix milliseconds)
// as the time of that change, as FeatBit's page shows it.
func versionTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
}

// postedRelay reads the settings form.
func postedRelay(c echo.Context) (name, description string, all bool, scopes []string, values map[string]string, err error) {
	form, err := c.FormParams()
	if err != nil {
		return "", "", false, nil, nil, err
	}
	name, description, all = form.Get("name"), form.Get("description"), form.Get("isAllEnvs") == "true"
	scopes = form["scopes"]
	if scopes == nil {
		scopes = []string{}
	}
	return name, description, all, scopes, map[string]string{"name": name, "description": description}, nil
}

// createRelayProxy creates a relay proxy and shows its key, once: the key
// is in this answer only, never in a redirect or a flash message.
func (p *pages) createRelayProxy(c echo.Context) error {
	name, description, all, scopes, values, err := postedRelay(c)
	if err != nil {
		return err
	}
	if all {
		scopes = nil
	}
	rp, err := p.store.RelayProxies().Create(c.Request().Context(), actor(c),
		relayproxies.Input{Name: name, Description: description, IsAllEnvs: all, Scopes: scopes})
	if err == nil {
		vm := views.RelayProxyKey{Name: rp.Name, Key: rp.Key, Href: "/relay-proxies/" + rp.ID.String(), BaseURL: p.baseURL.String()}
		if vm.Shell, err = p.shell(c, "Relay proxy created", navRelayProxies); err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return render(c, http.StatusOK, views.RelayProxyKeyPage(vm))
	}
	f := p.form(c, "relay", "/relay-proxies", values)
	status, err := formProblems(err, &f, "name", "description", "scopes")
	if err != nil {
		return err
	}
	return p.relayPage(c, status, nil, f, all, scopes, nil)
}

// relayProxy shows a relay proxy's page.
func (p *pages) relayProxy(c echo.Context) error {
	rp, err := p.pathRelay(c)
	if err != nil {
		return err
	}
	f := p.form(c, "relay", "/relay-proxies/"+rp.ID.String(), map[string]string{"name": rp.Name, "description": rp.Description})
	return p.relayPage(c, http.StatusOK, &rp, f, false, nil, nil)
}

// updateRelayProxy saves a relay proxy's settings.
func (p *pages) updateRelayProxy(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	name, description, all, scopes, values, err := postedRelay(c)
	if err != nil {
		return err
	}
	if all {
		scopes = []string{}
	}
	err = p.store.RelayProxies().SetSettings(c.Request().Context(), actor(c), id, name, description, all, scopes)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Relay proxy “%s” saved. Relays connected with its key follow within seconds.", strings.TrimSpace(name)))
		return redirect(c, "/relay-proxies/"+id.String())
	}
	f := p.form(c, "relay", "/relay-proxies/"+id.String(), values)
	status, err := formProblems(err, &f, "name", "description", "scopes")
	if err != nil {
		return err
	}
	rp, gerr := p.store.RelayProxies().Get(c.Request().Context(), actor(c), id)
	if gerr != nil {
		return gerr
	}
	return p.relayPage(c, status, &rp, f, all, scopes, nil)
}

// addRelayAgent adds a manual agent.
func (p *pages) addRelayAgent(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	name, host := c.FormValue("name"), c.FormValue("host")
	err = p.store.RelayProxies().AddAgent(c.Request().Context(), actor(c), id, name, host)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Agent “%s” added. Sync it to send it this key's data.", strings.TrimSpace(name)))
		return redirect(c, "/relay-proxies/"+id.String())
	}
	rp, gerr := p.store.RelayProxies().Get(c.Request().Context(), actor(c), id)
	if gerr != nil {
		return gerr
	}
	af := p.form(c, "relay-agent", "/relay-proxies/"+id.String()+"/agents", map[string]string{"name": name, "host": host})
	status, err := formProblems(err, &af, "name", "host")
	if err != nil {
		return err
	}
	f := p.form(c, "relay", "/relay-proxies/"+id.String(), map[string]string{"name": rp.Name, "description": rp.Description})
	return p.relayPage(c, status, &rp, f, false, nil, &af)
}

// syncRelayAgent pushes the key's data to a manual agent and says how it went.
func (p *pages) syncRelayAgent(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	res, err := p.relays.SyncAgent(c.Request().Context(), actor(c), id, c.Param("agentId"))
	if err != nil {
		return err
	}
	if res.Success {
		p.keepFlash(c, "Agent synced: it now serves "+orNothing(res.Serves)+".")
	} else {
		p.keepProblem(c, "Sync failed: "+res.Reason+".")
	}
	return redirect(c, "/relay-proxies/"+id.String())
}

func orNothing(serves string) string {
	if serves == "" {
		return "nothing"
	}
	return strings.ReplaceAll(serves, ",", ", ")
}

// removeRelayAgent removes a manual agent.
func (p *pages) removeRelayAgent(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := p.store.RelayProxies().RemoveAgent(c.Request().Context(), actor(c), id, c.Param("agentId")); err != nil {
		return err
	}
	p.keepFlash(c, "Agent removed.")
	return redirect(c, "/relay-proxies/"+id.String())
}

// removeAutoAgent removes an auto agent that stopped reporting.
func (p *pages) removeAutoAgent(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := p.store.RelayProxies().RemoveAutoAgent(c.Request().Context(), actor(c), id, c.Param("agentId")); err != nil {
		return err
	}
	p.keepFlash(c, "Agent "+c.Param("agentId")+" removed. If it runs again it registers again.")
	return redirect(c, "/relay-proxies/"+id.String())
}

// confirmDeleteRelayProxy asks before deleting a relay proxy.
func (p *pages) confirmDeleteRelayProxy(c echo.Context) error {
	rp, err := p.pathRelay(c)
	if err != nil {
		return err
	}
	href := "/relay-proxies/" + rp.ID.String()
	n := len(rp.Agents) + len(rp.AutoAgents)
	return p.iamConfirm(c, http.StatusOK, navRelayProxies, views.Confirm{
		Crumbs:  []views.Crumb{{Label: "Relay proxies", Href: "/relay-proxies"}, {Label: rp.Name, Href: href}},
		Heading: fmt.Sprintf("Delete the relay proxy “%s”?", rp.Name),
		Consequences: []string{
			"Its key stops working at once: relays connected with it are disconnected and stop.",
			"Its " + strconv.Itoa(n) + " " + plural(n, "agent is", "agents are") + " forgotten.",
		},
		Action: href + "/delete", Button: "Delete relay proxy", CancelHref: href,
	})
}

// deleteRelayProxy deletes a relay proxy and returns to the list.
func (p *pages) deleteRelayProxy(c echo.Context) error {
	rp, err := p.pathRelay(c)
	if err != nil {
		return err
	}
	if err := p.store.RelayProxies().Delete(c.Request().Context(), actor(c), rp.ID); err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf("Relay proxy “%s” deleted.", rp.Name))
	return redirect(c, "/relay-proxies")
}

// pathRelay reads the relay proxy the path's id names.
func (p *pages) pathRelay(c echo.Context) (relayproxies.Item, error) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return relayproxies.Item{}, err
	}
	return p.store.RelayProxies().Get(c.Request().Context(), actor(c), id)
}
