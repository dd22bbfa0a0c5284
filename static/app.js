// Bunting admin pages: small behaviours on top of server-rendered HTML and htmx.
// Every page works without this file; it adds the CSRF header to htmx requests,
// copy and reveal buttons, key suggestions, and auto-submitting switchers.
// Behaviour is declared with data- attributes, so no page needs inline script.
(function () {
  "use strict";

  // htmx requests carry the CSRF token in a header; forms also carry it as a field.
  document.addEventListener("htmx:configRequest", function (e) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) e.detail.headers["X-CSRF-Token"] = meta.content;
  });

  // A form marked data-drop-empty leaves its empty fields out of a GET, so
  // the address htmx pushes says only what narrows a list (?sort=name, not
  // ?q=&status=&sort=name).
  document.addEventListener("htmx:configRequest", function (e) {
    if (e.detail.verb !== "get" || !e.detail.elt.closest("[data-drop-empty]")) return;
    var data = e.detail.formData;
    Array.from(new Set(data.keys())).forEach(function (name) {
      if (data.getAll(name).every(function (v) { return v === ""; })) data.delete(name);
    });
  });

  // Controls that only work with script are rendered hidden and shown here.
  function enhance(root) {
    root.querySelectorAll("[data-js-only]").forEach(function (el) { el.hidden = false; });
    root.querySelectorAll("[data-no-js]").forEach(function (el) { el.hidden = true; });
    root.querySelectorAll("[data-show-when]").forEach(applyShowWhen);
    root.querySelectorAll("[data-show-for], [data-hide-for]").forEach(applyShowFor);
    root.querySelectorAll("[data-rollout]").forEach(sumRollout);
  }

  // data-show-when="type=Service" shows an element (and enables its fields)
  // only while the form's field "type" has that value.
  function applyShowWhen(el) {
    var rule = el.getAttribute("data-show-when").split("=");
    var form = el.closest("form");
    if (!form) return;
    var field = form.elements[rule[0]]; // a select, or a RadioNodeList for radios
    var value = field ? field.value : "";
    var on = value === rule[1];
    el.hidden = !on;
    el.querySelectorAll("input, textarea, select").forEach(function (f) { f.disabled = !on; });
  }

  // data-show-for="field:a|b" shows an element while the form's field has
  // one of the values; data-hide-for hides it then. Hidden fields still post:
  // the server ignores what does not apply (a condition's attribute when it
  // names segments), and nothing typed is lost when switching back.
  function applyShowFor(el) {
    var hide = el.hasAttribute("data-hide-for");
    var rule = el.getAttribute(hide ? "data-hide-for" : "data-show-for");
    var at = rule.lastIndexOf(":");
    var form = el.closest("form");
    var field = form && form.elements[rule.slice(0, at)];
    if (!field) return;
    var match = rule.slice(at + 1).split("|").indexOf(field.value) >= 0;
    el.hidden = hide ? match : !match;
  }

  // A rollout's total, as the percentages are typed (the server checks it too).
  function sumRollout(box) {
    var total = 0, whole = true;
    box.querySelectorAll('input[type="number"]').forEach(function (input) {
      var n = input.value === "" ? 0 : Number(input.value);
      if (!Number.isInteger(n)) whole = false;
      total += n;
    });
    var out = box.querySelector("[data-rollout-total]");
    if (!out) return;
    out.textContent = whole ? "Total " + total + "%" + (total === 100 ? "" : ": the percentages must add up to 100%.") : "Use whole percentages.";
    out.classList.toggle("field-error", !whole || total !== 100);
  }

  // A suggested key: lower case, runs of other characters become "-".
  function keyFrom(name) {
    return name.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 128);
  }

  document.addEventListener("input", function (e) {
    var t = e.target;
    var rollout = t.closest && t.closest("[data-rollout]");
    if (rollout) sumRollout(rollout);
    if (t.hasAttribute && t.hasAttribute("data-key-from")) {
      t.dataset.edited = t.value === "" ? "" : "yes"; // typed by hand: stop suggesting
      return;
    }
    var form = t.form;
    if (!form || !t.name) return;
    form.querySelectorAll('[data-key-from="' + t.name + '"]').forEach(function (key) {
      if (!key.dataset.edited) key.value = keyFrom(t.value);
    });
  });

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.form) t.form.querySelectorAll("[data-show-when]").forEach(applyShowWhen);
    if (t.form) t.form.querySelectorAll("[data-show-for], [data-hide-for]").forEach(applyShowFor);
    if (t.hasAttribute && t.hasAttribute("data-autosubmit") && t.form) t.form.requestSubmit();
    // data-submit-with="id" submits the form with that (script-hidden) button,
    // by clicking it: htmx learns a form's submitter from clicks.
    if (t.hasAttribute && t.hasAttribute("data-submit-with")) {
      var with_ = document.getElementById(t.getAttribute("data-submit-with"));
      if (with_) with_.click();
    }
  });

  // An editor with changes not yet saved (typed, or an unsaved state the
  // server shows, data-dirty) warns before the page is left or replaced by
  // anything but its own form.
  var leaving = "You have changes that are not saved. Leave without saving them?";
  function markDirty(e) {
    var form = e.target.form;
    if (form && form.hasAttribute("data-unsaved-warning") && e.target.name !== "comment") form.dataset.dirty = "1";
  }
  document.addEventListener("input", markDirty);
  document.addEventListener("change", markDirty);
  document.addEventListener("submit", function (e) {
    if (e.target.dataset) delete e.target.dataset.dirty; // saving is not leaving
  });
  function dirtyEditor(except) {
    var forms = document.querySelectorAll("form[data-unsaved-warning][data-dirty]");
    for (var i = 0; i < forms.length; i++) if (!forms[i].contains(except)) return forms[i];
    return null;
  }
  window.addEventListener("beforeunload", function (e) {
    if (dirtyEditor(null)) { e.preventDefault(); e.returnValue = ""; }
  });
  document.addEventListener("htmx:confirm", function (e) {
    var form = dirtyEditor(e.detail.elt);
    if (!form || e.detail.verb !== "get") return;
    e.preventDefault();
    if (window.confirm(leaving)) { delete form.dataset.dirty; e.detail.issueRequest(true); }
  });

  // A button marked data-clears-errors (a test that swaps in its own answer)
  // first takes the form's old problems away: they spoke of an earlier try.
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("[data-clears-errors]");
    if (!b || !b.form) return;
    b.form.querySelectorAll(".field-error, [data-testid=form-error]").forEach(function (el) { el.remove(); });
    b.form.querySelectorAll("[aria-invalid]").forEach(function (el) {
      el.removeAttribute("aria-invalid");
      el.removeAttribute("aria-describedby");
    });
  });

  // Briefly replaces a button's label to confirm what happened.
  function flashLabel(button, text) {
    var label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    button.textContent = text;
    setTimeout(function () { button.textContent = label; }, 1500);
  }

  function copy(text, button) {
    function fallback() {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "offscreen";
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand("copy");
      area.remove();
      flashLabel(button, ok ? "Copied" : "Copy failed");
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { flashLabel(button, "Copied"); }, fallback);
    } else {
      fallback();
    }
  }

  document.addEventListener("click", function (e) {
    var button = e.target.closest("button[data-copy], button[data-reveal], button[data-dismiss]");
    if (!button) return;
    if (button.hasAttribute("data-dismiss")) {
      var box = button.closest("[data-dismissable]");
      if (box) box.remove();
      return;
    }
    var target = document.getElementById(button.getAttribute("data-copy") || button.getAttribute("data-reveal"));
    if (!target) return;
    if (button.hasAttribute("data-copy")) {
      copy(target.value !== undefined ? target.value : target.textContent, button);
      return;
    }
    var shown = target.type === "password";
    target.type = shown ? "text" : "password";
    button.textContent = shown ? "Hide" : "Reveal";
    button.setAttribute("aria-pressed", shown ? "true" : "false");
  });

  // htmx.onLoad runs for the first page and for every piece of HTML htmx swaps in.
  if (window.htmx) {
    htmx.onLoad(enhance);
  } else {
    document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  }
})();
