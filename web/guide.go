package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/views"
)

// The first-run guide: an organization without projects is greeted by it
// (see home and flagsPage), and it stays at /get-started, linked from the
// flag list as "Connect your application".

const guidePath = "/get-started"

// Placeholders stand in the snippets for a secret the environment lacks.
const (
	serverSecretPlaceholder = "YOUR_SERVER_SECRET"
	clientSecretPlaceholder = "YOUR_CLIENT_SECRET"
)

// greeted sends to the first-run guide someone who sees no project and may
// create the first one, unless they skipped it, and tells whether it did.
// Members who may not are left on their page, which says whom to ask.
func (p *pages) greeted(c echo.Context) (bool, error) {
	w, err := p.workplace(c)
	if err != nil || len(w.Projects) > 0 || !place(c).Org.CreateProject ||
		slices.Contains(p.skippedGuides(c), actor(c).OrgID.String()) {
		return false, err
	}
	return true, c.Redirect(http.StatusSeeOther, guidePath)
}

// maxSkippedGuides bounds the list the session cookie keeps.
const maxSkippedGuides = 10

// skippedGuides are the organizations whose guide this session skipped.
func (p *pages) skippedGuides(c echo.Context) []string {
	list, _ := p.session(c).Values[sessionGuideSkipped].(string)
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// skipGuide stops greeting the person with the current organization's guide
// in this session; it stays at /get-started and behind "Connect your
// application".
func (p *pages) skipGuide(c echo.Context) error {
	org := actor(c).OrgID.String()
	list := slices.DeleteFunc(p.skippedGuides(c), func(id string) bool { return id == org })
	list = append(list, org)
	if len(list) > maxSkippedGuides {
		list = list[len(list)-maxSkippedGuides:]
	}
	sess := p.session(c)
	sess.Values[sessionGuideSkipped] = strings.Join(list, ",")
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/flags")
}

// guide shows the first-run guide.
func (p *pages) guide(c echo.Context) error {
	return p.guidePage(c, http.StatusOK, nil, nil)
}

// onboards tells whether the guide's first step onboards the organization
// (FeatBit's organizations/onboarding: a new organization, named
// environments) rather than creating a project with Prod and Dev.
func onboards(c echo.Context, org iam.Organization) bool {
	return !org.Initialized && place(c).Org.Name
}

// guidePage renders the guide; project and flag carry the state of the
// step's form just posted.
func (p *pages) guidePage(c echo.Context, status int, project, flag *views.Form) error {
	ctx, a := c.Request().Context(), actor(c)
	org, err := p.currentOrganization(c)
	if err != nil {
		return err
	}
	w, err := p.workplace(c)
	if err != nil {
		return err
	}
	vm := views.Guide{OrgName: org.Name, AskEnvironments: onboards(c, org)}
	env, ok := workEnvOf(c)
	if !ok || w.Env == nil {
		switch {
		case len(w.Projects) > 0:
			vm.NoProject = "Your projects have no environment you may open: add one on the Projects page, or ask an administrator for access."
		case !place(c).Org.CreateProject:
			vm.NoProject = "You may not create projects in this organization. Ask one of its owners to create the first one."
		case project != nil:
			vm.Project = project
		default:
			f := p.form(c, "guide-project", guidePath+"/project", map[string]string{"environments": "Dev, Prod"})
			vm.Project = &f
		}
	} else {
		vm.Env = env.projectName + " / " + env.name
		list, err := p.store.Flags().ListFlags(ctx, a, env.id, flagstore.FlagFilter{Page: core.Page{Size: 1}})
		if err != nil {
			return err
		}
		flagKey := "my-first-flag"
		switch {
		case len(list.Items) > 0:
			vm.FlagKey = list.Items[0].Key
			flagKey = vm.FlagKey
		case !env.rights.CreateFlag:
			vm.NoFlag = "You may not create flags in this environment; the snippets below read the key my-first-flag."
		case flag != nil:
			vm.Flag = flag
		default:
			f := p.form(c, "guide-flag", guidePath+"/flag", nil)
			vm.Flag = &f
		}
		if err := p.withRequest(c, env, vm.Flag); err != nil {
			return err
		}
		vm.Connect = p.connect(w.Env, flagKey, c.QueryParam("sdk")) // the frame's, with its secrets
		if place(c).Org.RelayProxies {
			vm.Connect.Relay = "/relay-proxies"
		}
	}
	shell, err := p.shell(c, "Get started", navFlags)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.GuidePage(vm))
}

// connect is step 3: a snippet for FeatBit's Node server SDK, its
// JavaScript client SDK, OpenFeature's OFREP provider or curl, filled with
// this server's URL and the environment's secrets. One is shown at a time,
// chosen by links (?sdk=, so the choice works without script); the Node
// server SDK is the default, as most first flags are evaluated on a server.
// Those who may open an environment are shown its secrets (as on its page);
// a missing secret is a placeholder, with a note.
func (p *pages) connect(env *core.Environment, flagKey, sdk string) *views.GuideConnect {
	server, client := serverSecretPlaceholder, clientSecretPlaceholder
	for _, s := range env.Secrets {
		switch {
		case s.Type == core.SecretServer && server == serverSecretPlaceholder:
			server = s.Value
		case s.Type == core.SecretClient && client == clientSecretPlaceholder:
			client = s.Value
		}
	}
	base := strings.TrimSuffix(p.baseURL.String(), "/")
	ws := *p.baseURL
	ws.Scheme = map[string]string{"https": "wss"}[p.baseURL.Scheme]
	if ws.Scheme == "" {
		ws.Scheme = "ws"
	}
	streaming := strings.TrimSuffix(ws.String(), "/")
	key := jsString(flagKey)
	out := &views.GuideConnect{Check: views.GuideCheck{Href: guidePath + "/check"}}
	out.Snippets = []views.Snippet{
		{ID: "node", Choice: "Node.js server", Title: "Node.js server (FeatBit's @featbit/node-server-sdk, server secret)",
			Install: "npm install @featbit/node-server-sdk",
			Code: fmt.Sprintf(`const { FbClientBuilder, UserBuilder } = require('@featbit/node-server-sdk');

const client = new FbClientBuilder()
  .sdkKey(%s)
  .streamingUri(%s)
  .eventsUri(%s)
  .build();

(async () => {
  await client.waitForInitialization();
  const user = new UserBuilder('user-1').name('First user').build();
  const on = await client.boolVariation(%s, user, false);
  console.log(%s, on);
  await client.flush(); // sends the evaluation to Bunting now
  await client.close();
})();`, jsString(server), jsString(base), jsString(base), key, jsString(flagKey+" is")),
		},
		{ID: "js", Choice: "Browser", Title: "Browser (FeatBit's @featbit/js-client-sdk, client secret)",
			Install: "npm install @featbit/js-client-sdk",
			Code: fmt.Sprintf(`import { FbClientBuilder, UserBuilder } from '@featbit/js-client-sdk';

const user = new UserBuilder('user-1').name('First user').build();
const client = new FbClientBuilder()
  .sdkKey(%s)
  .streamingUri(%s)
  .eventsUri(%s)
  .user(user)
  .build();

await client.waitForInitialization();
const on = client.boolVariation(%s, false);
console.log(%s, on);`, jsString(client), jsString(streaming), jsString(base), key, jsString(flagKey+" is")),
		},
		{ID: "ofrep", Choice: "OpenFeature", Title: "OpenFeature (OFREP provider, server secret)",
			Install: "npm install @openfeature/server-sdk @openfeature/ofrep-provider",
			Code: fmt.Sprintf(`const { OpenFeature } = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');

(async () => {
  await OpenFeature.setProviderAndWait(new OFREPProvider({
    baseUrl: %s,
    headers: [['Authorization', %s]],
  }));
  const on = await OpenFeature.getClient().getBooleanValue(%s, false, { targetingKey: 'user-1' });
  console.log(%s, on);
})();`, jsString(base), jsString(server), key, jsString(flagKey+" is")),
		},
		{ID: "curl", Choice: "curl", Title: "Any HTTP client (OFREP, server secret)",
			Code: fmt.Sprintf(`curl -s %s \
  -H %s -H 'Content-Type: application/json' \
  -d '{"context":{"targetingKey":"user-1"}}'`,
				shellString(base+"/ofrep/v1/evaluate/flags/"+url.PathEscape(flagKey)), shellString("Authorization: "+server)),
		},
	}
	chosen := slices.IndexFunc(out.Snippets, func(s views.Snippet) bool { return s.ID == sdk })
	if chosen < 0 {
		chosen = 0
	}
	for i, sn := range out.Snippets {
		out.SDKs = append(out.SDKs, views.Tab{Label: sn.Choice, Href: guidePath + "?sdk=" + sn.ID + "#connect",
			TestID: "guide-sdk-" + sn.ID, Active: i == chosen})
	}
	out.Snippets = out.Snippets[chosen : chosen+1]
	var missing []string
	if server == serverSecretPlaceholder {
		missing = append(missing, "a server secret ("+serverSecretPlaceholder+")")
	}
	if client == clientSecretPlaceholder {
		missing = append(missing, "a client secret ("+clientSecretPlaceholder+")")
	}
	if len(missing) > 0 {
		out.SecretNote = "This environment has no " + strings.Join(missing, " and no ") +
			": create one on the environment's page (Projects) and put it in place of the placeholder."
	}
	return out
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`)
	return "'" + r.Replace(s) + "'"
}

// shellString quotes s for a POSIX shell.
func shellString(s string) string {
	return "'" + strings.ReplaceAll(s, `'`, `'\''`) + "'"
}

// guideCheck answers the live check: waiting, or when the working
// environment saw its first SDK request.
func (p *pages) guideCheck(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	at, err := p.store.SDK().SDKFirstSeen(c.Request().Context(), actor(c), w.id)
	if err != nil {
		return err
	}
	check := views.GuideCheck{Href: guidePath + "/check", Received: at != nil}
	if at != nil {
		check.At = at.UTC().Format(time.DateTime + " UTC")
	}
	return render(c, http.StatusOK, views.GuideCheckView(check))
}

// createFirstProject is step 1: a new organization is onboarded as FeatBit
// does (its name and key kept, the project with the environments named);
// otherwise the project is created with Prod and Dev.
func (p *pages) createFirstProject(c echo.Context) error {
	ctx, a := c.Request().Context(), actor(c)
	org, err := p.currentOrganization(c)
	if err != nil {
		return err
	}
	name, key, envs := c.FormValue("projectName"), c.FormValue("projectKey"), c.FormValue("environments")
	if onboards(c, org) {
		in := iam.OnboardingInput{OrganizationName: org.Name, OrganizationKey: org.Key, ProjectName: name, ProjectKey: key}
		for _, e := range strings.Split(envs, ",") {
			if e = strings.TrimSpace(e); e != "" {
				in.Environments = append(in.Environments, e)
			}
		}
		err = p.store.IAM().Onboard(ctx, a, in)
	} else {
		_, err = p.store.Projects().CreateProject(ctx, a, core.ProjectInput{Name: name, Key: key})
	}
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Project “%s” created.", strings.TrimSpace(name)))
		return c.Redirect(http.StatusSeeOther, guidePath)
	}
	f := p.form(c, "guide-project", guidePath+"/project", map[string]string{"projectName": name, "projectKey": key, "environments": envs})
	status, err := formProblems(err, &f, "projectName", "projectKey", "environments", "name", "key")
	if err != nil {
		return err
	}
	// CreateProject names the fields name and key; the guide's form, as
	// FeatBit's onboarding, projectName and projectKey.
	for from, to := range map[string]string{"name": "projectName", "key": "projectKey"} {
		if msg, ok := f.Errors[from]; ok {
			f.Errors[to] = msg
			delete(f.Errors, from)
		}
	}
	return p.guidePage(c, status, &f, nil)
}

// createFirstFlag is step 2: a boolean flag in the working environment.
func (p *pages) createFirstFlag(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	in := flagstore.FlagInput{Name: c.FormValue("name"), Key: c.FormValue("key"), VariationType: targeting.VariationBoolean}
	if in.NewFlagRequest, err = newFlagRequest(c); err != nil {
		return err
	}
	f, err := p.store.Flags().CreateFlagRequesting(c.Request().Context(), actor(c), w.id, in)
	if err == nil {
		return p.flagCreated(c, f, fmt.Sprintf("Feature flag “%s” created.", f.Name), guidePath)
	}
	form := p.form(c, "guide-flag", guidePath+"/flag", map[string]string{"name": in.Name, "key": in.Key})
	status, err := formProblems(err, &form, "name", "key", "reason", "reviewers")
	if err != nil {
		return err
	}
	return p.guidePage(c, status, nil, &form)
}
