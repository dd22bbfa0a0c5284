package main

import (
	"fmt"
	"strings"
)

// The walk's relay proxy steps, on FeatBit's Relay Proxies page as its
// owner puts a relay next to the applications: create one in the drawer
// (a name, one environment chosen in the resource finder), copy its key
// from the dialog that shows it once, read it in the list with the key
// masked, and edit it (a new name, a second environment).

const (
	relayName    = "Edge relay"
	relayRenamed = "Edge relay (shop)"
)

// chooseEnv picks, in FeatBit's resource finder, the environment whose
// path ends with env, and confirms.
func chooseEnv(w *walker, env string) error {
	if err := w.click("Choose Environments"); err != nil {
		return err
	}
	// The finder loads the organization's resources and lists each with its
	// path of names (organization/project/environment).
	if err := w.clickMarked("the environment "+env, `window.__walk.byText(`+js(projectName+"/"+env)+`, "nz-list-item span", true, ".resource-finder-modal")`); err != nil {
		return err
	}
	if err := w.click("Ok", "button"); err != nil {
		return err
	}
	return w.settle()
}

func createRelayProxy(w *walker) error {
	// The owner finds the page in the side menu, from where the walk left them.
	if err := w.settle(); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.click("Relay Proxies", "li, a, span"); err != nil {
		return err
	}
	if err := w.waitPath("/relay-proxies"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/relay-proxies"); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.click("Add"); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.typeIntoField("Name", relayName); err != nil {
		return err
	}
	// The name is checked against the organization's relay proxies as it is typed.
	if _, err := w.expect(mark, "GET", "/relay-proxies/is-name-used"); err != nil {
		return err
	}
	if err := w.typeIntoField("Description", "Serves the shop's SDKs at the edge"); err != nil {
		return err
	}
	// Custom environments is the drawer's default scope.
	if err := chooseEnv(w, "Prod"); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	e, err := w.expect(mark, "POST", "/relay-proxies")
	if err != nil {
		return err
	}
	key, _ := field(e.Answer, "data.key")
	k, _ := key.(string)
	if !strings.HasPrefix(k, "rp-") {
		return fmt.Errorf("the new relay proxy's key is %q, not rp-…", key)
	}
	// The key is shown once, in a dialog that closes only once it is copied.
	if err := w.waitText(k); err != nil {
		return err
	}
	if err := w.clickMarked("the key", `window.__walk.css(".relay-proxy-key-modal .key")`); err != nil {
		return err
	}
	if err := w.clickWhenEnabled("Ok"); err != nil {
		return err
	}
	w.relayKey = k
	return nil
}

func listRelayProxy(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/relay-proxies"); err != nil {
		return err
	}
	e, err := w.expect(mark, "GET", "/relay-proxies")
	if err != nil {
		return err
	}
	if err := w.waitText(relayName); err != nil {
		return err
	}
	// The list shows the key's first characters only.
	if err := w.waitText(w.relayKey[:15] + "*"); err != nil {
		return err
	}
	var full bool
	if err := w.eval(`window.__walk.has(`+js(w.relayKey)+`)`, &full); err != nil {
		return err
	}
	if full {
		return fmt.Errorf("the list shows the relay proxy's whole key (answer %s)", e.Answer)
	}
	return w.waitText("Total: 1")
}

func editRelayProxy(w *walker) error {
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.click("Edit", "a"); err != nil {
		return err
	}
	if err := w.typeIntoField("Name", relayRenamed); err != nil {
		return err
	}
	if err := chooseEnv(w, "Dev"); err != nil {
		return err
	}
	// The drawer warns that agents pick up a new scope on restart or sync.
	if err := w.waitText("To apply the new scopes"); err != nil {
		return err
	}
	mark := w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "PUT", "/relay-proxies/[^/]+"); err != nil {
		return err
	}
	// The list reloads with the new name and both environments.
	if _, err := w.expect(mark, "GET", "/relay-proxies"); err != nil {
		return err
	}
	if err := w.waitText(relayRenamed); err != nil {
		return err
	}
	return w.waitText("Total: 2")
}
