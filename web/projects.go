package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

func projectHref(id uuid.UUID) string { return "/projects/" + id.String() }

func envHref(projectID, envID uuid.UUID) string {
	return projectHref(projectID) + "/envs/" + envID.String()
}

// projects lists the projects.
func (p *pages) projects(c echo.Context) error {
	return p.projectsPage(c, http.StatusOK, p.projectCreateForm(c, nil))
}

// projectCreateForm is nil when the person may not create projects.
func (p *pages) projectCreateForm(c echo.Context, values map[string]string) *views.Form {
	if !place(c).Org.CreateProject {
		return nil
	}
	f := p.form(c, "project-create", "/projects", values)
	return &f
}

// projectsPage renders the projects page, or its regions for htmx; create
// carries the state of a form just posted.
func (p *pages) projectsPage(c echo.Context, status int, create *views.Form) error {
	wp, err := p.workplace(c)
	if err != nil {
		return err
	}
	var list views.ProjectList
	env, _ := workEnvOf(c)
	for _, pr := range wp.Projects {
		row := views.ProjectRow{Name: pr.Name, Key: pr.Key, Href: projectHref(pr.ID)}
		for _, e := range pr.Environments {
			row.Envs = append(row.Envs, views.EnvLink{Name: e.Name, Href: envHref(pr.ID, e.ID), Current: e.ID == env.id})
		}
		list.Rows = append(list.Rows, row)
	}
	regions := []templ.Component{views.ProjectListView(list), p.switcherAgain(c)}
	if create != nil {
		regions = append(regions, views.ProjectCreate(*create))
	}
	return p.respond(c, status, "Projects", navProjects, func(shell views.Shell) templ.Component {
		return views.ProjectsPage(views.Projects{Shell: shell, List: list, Create: create})
	}, regions...)
}

// createProject creates a project with its default environments.
func (p *pages) createProject(c echo.Context) error {
	var posted nameKeyForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := core.ProjectInput(posted)
	pr, err := p.store.Projects().CreateProject(c.Request().Context(), actor(c), in)
	if err == nil {
		return p.changed(c, "/projects", fmt.Sprintf("Project “%s” created.", pr.Name), func() error {
			return p.projectsPage(c, http.StatusOK, p.projectCreateForm(c, nil))
		})
	}
	f := p.projectCreateForm(c, map[string]string{"name": in.Name, "key": in.Key})
	if f == nil {
		return err
	}
	status, err := formProblems(err, f, "name", "key")
	if err != nil {
		return err
	}
	return p.projectsPage(c, status, f)
}

// project shows one project with its environments.
func (p *pages) project(c echo.Context) error {
	return p.projectPage(c, http.StatusOK, nil, nil)
}

// projectPage renders a project's page; rename and create carry the state of
// a form just posted, nil for fresh forms.
func (p *pages) projectPage(c echo.Context, status int, rename, create *views.Form) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	pr, err := p.store.Projects().GetProject(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	href := projectHref(pr.ID)
	may := place(c).Org.Project(pr.Key)
	if rename == nil && may.Rename {
		f := p.form(c, "project-rename", href, map[string]string{"name": pr.Name})
		rename = &f
	}
	if create == nil && may.CreateEnv {
		f := p.form(c, "env-create", href+"/envs", nil)
		create = &f
	}
	envs := views.EnvList{Create: create}
	for _, e := range pr.Environments {
		row := views.EnvRow{Name: e.Name, Key: e.Key, Description: e.Description, Href: envHref(pr.ID, e.ID),
			RequireComment: e.Settings.RequireChangeComment}
		if may.Env(e.Key).Delete {
			row.DeleteHref = row.Href + "/delete"
		}
		envs.Rows = append(envs.Rows, row)
	}
	vm := views.Project{Name: pr.Name, Key: pr.Key, Rename: rename, Envs: envs}
	if may.Delete {
		vm.DeleteHref = href + "/delete"
	}
	regions := []templ.Component{views.ProjectHeading(pr.Name, pr.Key), views.EnvListView(envs), p.switcherAgain(c)}
	if rename != nil {
		regions = append(regions, views.ProjectRename(*rename))
	}
	return p.respond(c, status, pr.Name, navProjects, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.ProjectPage(vm)
	}, regions...)
}

// renameProject changes a project's name.
func (p *pages) renameProject(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted nameKeyForm) (core.ProjectName, error) {
		return p.store.Projects().RenameProject(ctx, a, id, core.ProjectInput(posted))
	}, func(renamed core.ProjectName) error {
		return p.changed(c, projectHref(id), fmt.Sprintf("Project renamed to “%s”.", renamed.Name), func() error {
			return p.projectPage(c, http.StatusOK, nil, nil)
		})
	}, func(posted nameKeyForm) views.Form {
		return p.form(c, "project-rename", projectHref(id), map[string]string{"name": posted.Name})
	}, func(status int, f views.Form) error { return p.projectPage(c, status, &f, nil) }, "name")
}

// confirmDeleteProject asks before deleting a project, naming what goes
// with it and asking for its key to be typed.
func (p *pages) confirmDeleteProject(c echo.Context) error {
	_, pr, err := byPathID(c, p.store.Projects().GetProject)
	if err != nil {
		return err
	}
	return p.confirmPage(c, http.StatusOK, p.projectDeletion(c, pr))
}

// projectDeletion is the confirmation of a project's deletion.
func (p *pages) projectDeletion(c echo.Context, pr core.Project) views.Confirm {
	names := make([]string, len(pr.Environments))
	for i, e := range pr.Environments {
		names[i] = "“" + e.Name + "”"
	}
	href := projectHref(pr.ID)
	vm := views.Confirm{
		Crumbs:  []views.Crumb{{Label: "Projects", Href: "/projects"}, {Label: pr.Name, Href: href}},
		Heading: fmt.Sprintf("Delete the project “%s”?", pr.Name),
		Consequences: []string{
			fmt.Sprintf("The project “%s” (key %s) is deleted with %s %s.", pr.Name, pr.Key,
				plural(len(names), "its environment", "its environments"), strings.Join(names, ", ")),
			"Every feature flag and segment in those environments is deleted with them.",
			"Their SDK secrets stop working: SDKs using them are refused.",
		},
		Button: "Delete project", CancelHref: href, TypeToConfirm: pr.Key,
	}
	if place(c).Org.Project(pr.Key).Delete {
		vm.Action = href + "/delete"
	}
	return vm
}

// plural picks the singular or the plural wording for n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (p *pages) confirmPage(c echo.Context, status int, vm views.Confirm) error {
	shell, err := p.shell(c, vm.Heading, navProjects)
	if err != nil {
		return err
	}
	vm.Shell = shell
	return render(c, status, views.ConfirmPage(vm))
}

// deleteProject deletes a project and everything in it.
func (p *pages) deleteProject(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	pr, err := p.store.Projects().GetProject(ctx, actor(c), id)
	if err != nil {
		return err
	}
	// A whole project goes at once: its key must be typed, so a slip of
	// the mouse or a guessed address deletes nothing.
	// (Someone who may not delete it is refused by the store, as ever.)
	if typed := c.FormValue("confirm"); typed != pr.Key && place(c).Org.Project(pr.Key).Delete {
		vm := p.projectDeletion(c, pr)
		vm.Typed, vm.Problem = typed, "Type the project's key, "+pr.Key+", exactly."
		return p.confirmPage(c, http.StatusBadRequest, vm)
	}
	if err := p.store.Projects().DeleteProject(ctx, actor(c), id); err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf("Project “%s” deleted.", pr.Name))
	return c.Redirect(http.StatusSeeOther, "/projects")
}

// createEnvironment adds an environment to a project.
func (p *pages) createEnvironment(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted environmentForm) (core.Environment, error) {
		return p.store.Projects().CreateEnvironment(ctx, a, id, posted.input())
	}, func(env core.Environment) error {
		return p.changed(c, projectHref(id), fmt.Sprintf("Environment “%s” added.", env.Name), func() error {
			return p.projectPage(c, http.StatusOK, nil, nil)
		})
	}, func(posted environmentForm) views.Form {
		return p.form(c, "env-create", projectHref(id)+"/envs",
			map[string]string{"name": posted.Name, "key": posted.Key, "description": deref(posted.Description)})
	}, func(status int, f views.Form) error { return p.projectPage(c, status, nil, &f) }, "name", "key", "description")
}

// environment shows an environment's settings and secrets.
func (p *pages) environment(c echo.Context) error {
	return p.environmentPage(c, http.StatusOK, nil, nil, nil)
}

// envIDs reads the project and environment ids of an environment's routes.
func envIDs(c echo.Context) (projectID, envID uuid.UUID, err error) {
	if projectID, err = httpx.PathID(c, "id"); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	envID, err = httpx.PathID(c, "envId")
	return projectID, envID, err
}

// projectEnv reads the project and the environment the path names, which an
// environment's page and its delete confirmation both show.
func (p *pages) projectEnv(c echo.Context) (core.Project, core.Environment, error) {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return core.Project{}, core.Environment{}, err
	}
	ctx, a := c.Request().Context(), actor(c)
	pr, err := p.store.Projects().GetProject(ctx, a, projectID)
	if err != nil {
		return core.Project{}, core.Environment{}, err
	}
	env, err := p.store.Projects().GetEnvironment(ctx, a, projectID, envID)
	return pr, env, err
}

// environmentPage renders an environment's page; settings, create and a
// secret's rename form carry the state of a form just posted.
func (p *pages) environmentPage(c echo.Context, status int, settings, create *views.Form, renamed *renamedSecret) error {
	pr, env, err := p.projectEnv(c)
	if err != nil {
		return err
	}
	projectID, envID := pr.ID, env.ID
	href := envHref(pr.ID, env.ID)
	may := place(c).Org.Project(pr.Key).Env(env.Key)

	view := views.EnvSettings{Editable: may.Settings, Key: env.Key}
	if settings != nil {
		view.Form = *settings
	} else {
		view.Form = p.form(c, "env-settings", href, envSettingsValues(env.Name, env.Key, env.Description, env.Settings))
	}
	if err := p.approverChoices(c, &view, projectID, envID); err != nil {
		return err
	}

	secrets := views.SecretList{CSRF: csrfToken(c), Types: options(core.SecretServer, core.SecretServer, core.SecretClient)}
	if may.CreateSecret {
		if create == nil {
			f := p.form(c, "secret-create", href+"/secrets", map[string]string{"type": core.SecretServer})
			create = &f
		}
		secrets.Create = create
		secrets.Types = options(create.Values["type"], core.SecretServer, core.SecretClient)
	}
	for _, sec := range env.Secrets {
		row := views.SecretRow{ID: sec.ID.String(), Name: sec.Name, Type: sec.Type, Value: sec.Value}
		action := href + "/secrets/" + sec.ID.String()
		if may.RenameSecret {
			f := p.form(c, "secret-"+sec.ID.String(), action, map[string]string{"name": sec.Name})
			if renamed != nil && renamed.id == sec.ID {
				f = renamed.form
			}
			row.Rename = &f
		}
		if may.DeleteSecret {
			row.DeleteAction = action + "/delete"
		}
		secrets.Rows = append(secrets.Rows, row)
	}

	vm := views.Environment{Name: env.Name, Key: env.Key, Settings: view, Secrets: secrets,
		Crumbs: []views.Crumb{{Label: "Projects", Href: "/projects"}, {Label: pr.Name, Href: projectHref(pr.ID)}}}
	if may.Delete {
		vm.DeleteHref = href + "/delete"
	}
	return p.respond(c, status, env.Name+" · "+pr.Name, navProjects, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.EnvironmentPage(vm)
	}, views.EnvHeading(env.Name, env.Key), views.EnvSettingsView(view), views.SecretListView(secrets), p.switcherAgain(c))
}

// renamedSecret is the state of one secret's rename form just posted.
type renamedSecret struct {
	id   uuid.UUID
	form views.Form
}

// updateEnvironment changes an environment's name, key, description and settings.
func (p *pages) updateEnvironment(c echo.Context) error {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return err
	}
	in, err := postedInput[environmentForm](c)
	if err != nil {
		return err
	}
	// An unticked checkbox sends nothing; this form always sets the settings.
	cr := &core.ChangeRequestSettings{IsEnabled: c.FormValue("changeRequestEnabled") == "true"}
	in.Settings = &core.EnvSettings{RequireChangeComment: c.FormValue("requireChangeComment") == "true", ChangeRequest: cr}
	// A number that does not parse is 0, which the store refuses by name;
	// none at all is the least, 1.
	cr.ApprovalsRequired = 1
	if n := strings.TrimSpace(c.FormValue("approvalsRequired")); n != "" {
		cr.ApprovalsRequired, _ = strconv.Atoi(n)
	}
	cr.ApproverMemberIDs, err = formIDs(c, "approverMemberIds")
	if err == nil {
		cr.ApproverGroupIDs, err = formIDs(c, "approverGroupIds")
	}
	var env core.Environment
	if err == nil {
		env, err = p.store.Projects().UpdateEnvironment(c.Request().Context(), actor(c), projectID, envID, in)
	}
	href := envHref(projectID, envID)
	if err == nil {
		return p.changed(c, href, fmt.Sprintf("Environment “%s” saved.", env.Name), func() error {
			return p.environmentPage(c, http.StatusOK, nil, nil, nil)
		})
	}
	f := p.form(c, "env-settings", href, envSettingsValues(in.Name, in.Key, deref(in.Description), *in.Settings))
	f.Values["approvalsRequired"] = c.FormValue("approvalsRequired")
	status, err := formProblems(err, &f, "name", "key", "description", "approvalsRequired", "approverMemberIds", "approverGroupIds")
	if err != nil {
		return err
	}
	return p.environmentPage(c, status, &f, nil, nil)
}

// confirmDeleteEnvironment asks before deleting an environment.
func (p *pages) confirmDeleteEnvironment(c echo.Context) error {
	pr, env, err := p.projectEnv(c)
	if err != nil {
		return err
	}
	href := envHref(pr.ID, env.ID)
	vm := views.Confirm{
		Crumbs:  []views.Crumb{{Label: "Projects", Href: "/projects"}, {Label: pr.Name, Href: projectHref(pr.ID)}, {Label: env.Name, Href: href}},
		Heading: fmt.Sprintf("Delete the environment “%s” of %s?", env.Name, pr.Name),
		Consequences: []string{
			fmt.Sprintf("The environment “%s” (key %s) is deleted with every feature flag and segment in it.", env.Name, env.Key),
			fmt.Sprintf("Its %d %s stop working: SDKs using them are refused.", len(env.Secrets), plural(len(env.Secrets), "SDK secret", "SDK secrets")),
		},
		Button: "Delete environment", CancelHref: href,
	}
	if place(c).Org.Project(pr.Key).Env(env.Key).Delete {
		vm.Action = href + "/delete"
	}
	return p.confirmPage(c, http.StatusOK, vm)
}

// deleteEnvironment deletes an environment and everything in it.
func (p *pages) deleteEnvironment(c echo.Context) error {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return err
	}
	env, err := p.store.Projects().GetEnvironment(c.Request().Context(), actor(c), projectID, envID)
	if err != nil {
		return err
	}
	if err := p.store.Projects().DeleteEnvironment(c.Request().Context(), actor(c), projectID, envID); err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf("Environment “%s” deleted.", env.Name))
	return c.Redirect(http.StatusSeeOther, projectHref(projectID))
}

// createSecret adds a secret to an environment.
func (p *pages) createSecret(c echo.Context) error {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return err
	}
	href := envHref(projectID, envID)
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted secretForm) (core.Secret, error) {
		return p.store.Projects().CreateSecret(ctx, a, envID, core.SecretInput(posted))
	}, func(sec core.Secret) error {
		return p.changed(c, href, fmt.Sprintf("Secret “%s” added.", sec.Name), func() error {
			return p.environmentPage(c, http.StatusOK, nil, nil, nil)
		})
	}, func(posted secretForm) views.Form {
		return p.form(c, "secret-create", href+"/secrets", map[string]string{"name": posted.Name, "type": posted.Type})
	}, func(status int, f views.Form) error { return p.environmentPage(c, status, nil, &f, nil) }, "name", "type")
}

// renameSecret renames a secret; its value never changes.
func (p *pages) renameSecret(c echo.Context) error {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return err
	}
	secretID, err := httpx.PathID(c, "secretId")
	if err != nil {
		return err
	}
	href := envHref(projectID, envID)
	return submitForm(c, func(ctx context.Context, a *core.Actor, posted secretForm) (core.Secret, error) {
		return p.store.Projects().UpdateSecret(ctx, a, envID, secretID, core.SecretInput(posted))
	}, func(sec core.Secret) error {
		return p.changed(c, href, fmt.Sprintf("Secret renamed to “%s”.", sec.Name), func() error {
			return p.environmentPage(c, http.StatusOK, nil, nil, nil)
		})
	}, func(posted secretForm) views.Form {
		return p.form(c, "secret-"+secretID.String(), href+"/secrets/"+secretID.String(), map[string]string{"name": posted.Name})
	}, func(status int, f views.Form) error {
		return p.environmentPage(c, status, nil, nil, &renamedSecret{id: secretID, form: f})
	}, "name")
}

// deleteSecret deletes a secret.
func (p *pages) deleteSecret(c echo.Context) error {
	projectID, envID, err := envIDs(c)
	if err != nil {
		return err
	}
	secretID, err := httpx.PathID(c, "secretId")
	if err != nil {
		return err
	}
	if err := p.store.Projects().DeleteSecret(c.Request().Context(), actor(c), envID, secretID); err != nil {
		return err
	}
	return p.changed(c, envHref(projectID, envID), "Secret deleted.", func() error {
		return p.environmentPage(c, http.StatusOK, nil, nil, nil)
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// envSettingsValues are the settings form's values; the chosen approvers
// are comma-separated ids.
func envSettingsValues(name, key, description string, st core.EnvSettings) map[string]string {
	v := map[string]string{"name": name, "key": key, "description": description,
		"requireChangeComment": fmt.Sprint(st.RequireChangeComment), "approvalsRequired": "1"}
	if cr := st.ChangeRequest; cr != nil {
		v["changeRequestEnabled"] = fmt.Sprint(cr.IsEnabled)
		v["approvalsRequired"] = strconv.Itoa(cr.ApprovalsRequired)
		v["approverMemberIds"] = joinIDs(cr.ApproverMemberIDs)
		v["approverGroupIds"] = joinIDs(cr.ApproverGroupIDs)
	}
	return v
}

func joinIDs(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}

// approverChoices fills the settings' members and groups to choose approvers
// from, those chosen selected; for someone who may not edit, it names them.
func (p *pages) approverChoices(c echo.Context, view *views.EnvSettings, projectID, envID uuid.UUID) error {
	chosen := func(key string) []string { return strings.Split(view.Form.Values[key], ",") }
	if !view.Editable {
		if view.Form.Values["changeRequestEnabled"] != "true" {
			return nil
		}
		names, err := p.store.Flags().Approvers(c.Request().Context(), actor(c), envID)
		if err != nil {
			return err
		}
		var list []string
		for _, ap := range names {
			list = append(list, ap.Name)
		}
		view.Approvers = strings.Join(list, ", ")
		return nil
	}
	members, groups, err := p.store.Governance().ApproverChoices(c.Request().Context(), actor(c), projectID, envID)
	if err != nil {
		return err
	}
	for _, m := range members {
		view.Members = append(view.Members, views.Option{Value: m.ID.String(), Label: m.Name, Selected: slices.Contains(chosen("approverMemberIds"), m.ID.String())})
	}
	for _, g := range groups {
		view.Groups = append(view.Groups, views.Option{Value: g.ID.String(), Label: g.Name, Selected: slices.Contains(chosen("approverGroupIds"), g.ID.String())})
	}
	return nil
}
