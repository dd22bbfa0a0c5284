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
    root.querySelectorAll("[data-select-all]").forEach(showSelection);
  }

  // data-select-all="name" on a checkbox checks or clears every checkbox of
  // that name in its form, and shows whether all, some (indeterminate) or
  // none of them are checked.
  function selectAllBoxes(all) {
    return all.form ? all.form.querySelectorAll('input[type="checkbox"][name="' + all.getAttribute("data-select-all") + '"]') : [];
  }
  function showSelection(all) {
    var boxes = selectAllBoxes(all), checked = 0;
    boxes.forEach(function (b) { if (b.checked) checked++; });
    all.checked = boxes.length > 0 && checked === boxes.length;
    all.indeterminate = checked > 0 && checked < boxes.length;
  }
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (!t.form || t.type !== "checkbox") return;
    if (t.hasAttribute("data-select-all")) {
      selectAllBoxes(t).forEach(function (b) { b.checked = t.checked; });
      t.indeterminate = false;
      return;
    }
    t.form.querySelectorAll('[data-select-all="' + t.name + '"]').forEach(showSelection);
  });

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

// ---- Navigation: the search dialog (Ctrl+K / ⌘K) and the phone menu ------
// Kept apart from the behaviours above. Without script the top bar's Search
// and Menu are links: to the search page, and to the navigation below the
// content.
(function () {
  "use strict";

  var opener = null; // what had focus before the dialog opened; it gets it back

  function dialog() { return document.getElementById("search-dialog"); }
  function input() { return document.getElementById("search-dialog-q"); }
  function hits(d) { return Array.prototype.slice.call(d.querySelectorAll("#search-results a[data-search-hit]")); }

  function openSearch() {
    var d = dialog();
    if (!d) return;
    if (!d.open) {
      opener = document.activeElement;
      d.showModal();
    }
    input().focus();
    input().select();
  }

  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && (e.key === "k" || e.key === "K")) {
      e.preventDefault();
      openSearch();
    }
  });

  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest("[data-search-open]")) openSearch();
    // Close, or a click on the backdrop (the dialog itself, outside its
    // box), closes it.
    var d = dialog();
    if (d && d.open && (e.target === d || (e.target.closest && e.target.closest("[data-search-close]")))) d.close();
  });

  // In the dialog: the arrows move between the input and the results (Enter
  // on one follows its link), typing on a result goes on in the input, and
  // Escape closes (also a search input's Escape, which would only clear it).
  document.addEventListener("keydown", function (e) {
    var d = dialog();
    if (!d || !d.open || !d.contains(e.target)) return;
    var list = hits(d), at = list.indexOf(document.activeElement), field = input();
    if (e.key === "Escape") {
      e.preventDefault();
      d.close();
    } else if (e.key === "ArrowDown" && list.length) {
      e.preventDefault();
      list[Math.min(at + 1, list.length - 1)].focus();
    } else if (e.key === "ArrowUp" && at >= 0) {
      e.preventDefault();
      (at === 0 ? field : list[at - 1]).focus();
    } else if (at >= 0 && e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
      field.focus(); // the key lands in the input
    }
  });

  // Enter in the input submits its form: to the first result of the search
  // as typed now, or, with none answered yet, to the search page.
  document.addEventListener("submit", function (e) {
    var d = dialog();
    if (!d || !d.contains(e.target)) return;
    var list = hits(d), answer = d.querySelector("#search-results [data-search-answer]");
    if (list.length && answer && answer.getAttribute("data-q") === input().value.trim()) {
      e.preventDefault();
      window.location.assign(list[0].href);
    }
  });

  document.addEventListener("close", function (e) {
    if (e.target !== dialog()) return;
    if (opener && opener.isConnected && typeof opener.focus === "function") opener.focus();
    opener = null;
  }, true); // close does not bubble

  // The shortcut as this keyboard says it.
  function shortcutLabels(root) {
    if (!/Mac|iPhone|iPad/.test(navigator.platform || "")) return;
    root.querySelectorAll("[data-search-shortcut]").forEach(function (k) { k.textContent = "⌘K"; });
  }

  // The phone menu: the navigation folds behind the Menu button (the
  // stylesheet hides it at phone widths once the body is marked), and
  // Escape folds it again, back on the button.
  function setMenu(button, open) {
    var nav = document.getElementById(button.getAttribute("aria-controls"));
    if (!nav) return;
    button.setAttribute("aria-expanded", open ? "true" : "false");
    nav.classList.toggle("open", open);
  }
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-menu-toggle]");
    if (button) setMenu(button, button.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var button = document.querySelector('[data-menu-toggle][aria-expanded="true"]');
    var nav = button && document.getElementById(button.getAttribute("aria-controls"));
    if (nav && nav.contains(e.target)) {
      setMenu(button, false);
      button.focus();
    }
  });

  function start() {
    document.body.classList.add("nav-folds");
    shortcutLabels(document);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
