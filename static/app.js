// Bunting admin pages: small behaviours on top of server-rendered HTML and htmx.
// Every page works without this file; it adds the CSRF header to htmx requests,
// copy and reveal buttons, key suggestions, auto-submitting switchers, keeps
// the keyboard's place across htmx answers, and suggests end users.
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
    localTimes(root);
  }

  // Times the server wrote in UTC (<time datetime> with data-local-format,
  // or an SVG tspan with data-local-time) are shown in the viewer's time
  // zone, and the labels that named UTC ([data-local-zone]) name that zone.
  // Without script the page keeps UTC, and says so.
  var localFormats = {
    time: { hour: "2-digit", minute: "2-digit", hourCycle: "h23" },
    datetime: { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" },
    row: { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }
  };
  function localTimes(root) {
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
    if (!zone || /^(Etc\/)?(UTC|GMT|UCT|Zulu)$/.test(zone)) return; // already what the server wrote
    root.querySelectorAll("time[datetime][data-local-format], [data-local-time]").forEach(function (el) {
      var at = new Date(el.getAttribute("data-local-time") || el.getAttribute("datetime"));
      var opts = localFormats[el.getAttribute("data-local-format")];
      if (isNaN(at) || !opts) return;
      el.textContent = new Intl.DateTimeFormat(undefined, opts).format(at);
    });
    root.querySelectorAll("[data-local-zone]").forEach(function (el) { el.textContent = zone; });
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

  // A rollout's total, as the percentages are typed (the server checks it
  // too): summed in hundredths of a percent, so 33.33 + 33.33 + 33.34 is 100.
  function sumRollout(box) {
    var total = 0, fine = true;
    box.querySelectorAll('input[type="number"]').forEach(function (input) {
      var v = input.value.trim();
      if (v === "") return;
      if (!/^\d+(\.\d{0,2})?$/.test(v) && !/^\.\d{1,2}$/.test(v)) { fine = false; return; }
      total += Math.round(Number(v) * 100);
    });
    var out = box.querySelector("[data-rollout-total]");
    if (!out) return;
    var wrong = !fine || total !== 10000;
    // A problem the server found is said once, by the server, until the
    // percentages change.
    if (!box.dataset.typed && out.classList.contains("field-error") && wrong) return;
    out.textContent = fine ? "Total " + (total / 100) + "%" + (total === 10000 ? "" : ": the percentages must add up to 100%.") : "Use percentages with at most two decimals, such as 12.34.";
    out.classList.toggle("field-error", wrong);
    // Marked wrong by the server, the percentages stop being so once they add up.
    if (!wrong) box.querySelectorAll("[aria-invalid]").forEach(function (input) { input.removeAttribute("aria-invalid"); });
  }

  // With script, the arrow keys move between a chart's steps, the empty
  // ones too (Tab stops only at steps with evaluations); Home and End go to
  // the first and the last.
  document.addEventListener("keydown", function (e) {
    var step = e.target.closest && e.target.closest(".chart .bucket");
    if (!step || ["ArrowLeft", "ArrowRight", "Home", "End"].indexOf(e.key) < 0) return;
    var steps = Array.prototype.slice.call(step.parentNode.querySelectorAll(".bucket"));
    var i = steps.indexOf(step);
    var to = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: steps.length - 1 }[e.key];
    if (to < 0 || to >= steps.length) return;
    e.preventDefault();
    if (!steps[to].hasAttribute("tabindex")) steps[to].setAttribute("tabindex", "-1");
    steps[to].focus();
  });

  // A suggested key: lower case, runs of other characters become "-".
  function keyFrom(name) {
    return name.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 128);
  }

  document.addEventListener("input", function (e) {
    var t = e.target;
    var rollout = t.closest && t.closest("[data-rollout]");
    if (rollout) { rollout.dataset.typed = "1"; sumRollout(rollout); }
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

  // The keyboard keeps its place across htmx answers. What should have the
  // focus next is named by the element that asked (data-focus-after="id"),
  // or by the answer (HX-Trigger "bunting:focus", which wins: only the
  // answer knows whether a save went through); it gets it as the new part
  // is swapped in. Messages the answer names ("bunting:announce") are said
  // through the layout's polite live region.
  var nextFocus = null;
  function giveFocus(id) {
    var el = document.getElementById(id);
    if (!el) return;
    // The details holding it open, but not the one a summary heads: the
    // keyboard back on a pop-up's switch leaves the pop-up closed.
    var inside = el.tagName === "SUMMARY" ? el.parentElement.parentElement : el;
    for (var d = inside && inside.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    if (el.tabIndex < 0 && !el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1"); // a heading
    el.focus();
  }
  var sayTimer;
  function say(text) {
    var region = document.getElementById("announcer");
    if (!region || !text) return;
    // Emptied first, so the same message twice is said twice.
    region.textContent = "";
    clearTimeout(sayTimer);
    sayTimer = setTimeout(function () { region.textContent = text; }, 100);
  }
  // What had the focus when the request left: a button the request disables
  // meanwhile can lose it before the answer comes, so htmx's own keeping of
  // the focused element's id would find nothing to keep.
  var hadFocus = null;
  document.addEventListener("htmx:beforeRequest", function (e) {
    var elt = e.detail.elt;
    nextFocus = elt && elt.getAttribute && elt.getAttribute("data-focus-after") || null;
    hadFocus = document.activeElement;
  });
  document.addEventListener("bunting:focus", function (e) { nextFocus = e.detail.value; });
  document.addEventListener("bunting:announce", function (e) { say(e.detail.value); });
  // At the swap, in the same task that puts the new part in: nothing typed
  // after it appears can land before the focus moves.
  // With nothing named, an element the answer replaced gets the focus back
  // in its new form (the same id): a refused save stays on its Save button.
  document.addEventListener("htmx:afterSwap", function () {
    var id = nextFocus || (hadFocus && !hadFocus.isConnected && hadFocus.id) || null;
    nextFocus = hadFocus = null;
    if (id) giveFocus(id);
  });
  // A page shown after a change that went elsewhere (creating a flag opens
  // it) starts the keyboard at its heading, and says the message above it.
  // A page shown again with the problems of the form just posted (a
  // refused Create webhook, Add member) starts it at the first field
  // marked wrong, else at the form's message: where the problem is.
  function afterChange() {
    if (document.activeElement !== document.body) return;
    var wrong = document.querySelector('main [aria-invalid="true"]') || document.querySelector("main [data-testid=form-error]");
    if (wrong) { giveFocus(wrong.id || (wrong.id = "form-problem")); return; }
    // A page may mark where its next step starts (data-start-here: the
    // guide's next step), else its heading.
    var kept = document.querySelector("#flash [data-testid=flash-success]");
    var heading = document.querySelector("main [data-start-here]") || document.querySelector("main h1");
    if (!kept || !heading) return;
    heading.setAttribute("tabindex", "-1");
    heading.focus();
    say(kept.textContent);
  }

  // A user-key field marked data-suggest-users="/end-users/suggest" suggests
  // the end users SDKs have seen whose key or name matches the word being
  // typed (the text since the last line break or comma), in the listbox it
  // controls: the arrow keys move through them, Enter or a click takes one
  // (its key replaces the word, and a new line starts), Escape closes.
  function suggestList(field) { return document.getElementById(field.getAttribute("aria-controls")); }
  function currentWord(field) {
    var upto = field.value.slice(0, field.selectionStart);
    var start = Math.max(upto.lastIndexOf("\n"), upto.lastIndexOf(",")) + 1;
    while (start < upto.length && /\s/.test(upto.charAt(start))) start++;
    return { start: start, text: upto.slice(start).trim() };
  }
  function closeSuggestions(field) {
    var list = suggestList(field);
    if (list) { list.hidden = true; list.innerHTML = ""; }
    field.removeAttribute("aria-activedescendant");
  }
  var suggestTimer, suggestAsked = 0;
  function askSuggestions(field) {
    var list = suggestList(field), word = currentWord(field).text, asked = ++suggestAsked;
    if (!list || !word) { if (list) closeSuggestions(field); return; }
    fetch(field.getAttribute("data-suggest-users") + "?q=" + encodeURIComponent(word), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        if (asked !== suggestAsked || document.activeElement !== field) return; // a later word, or gone
        var had = list.hidden ? 0 : list.children.length;
        list.innerHTML = html; // the server's escaped options
        var options = list.querySelectorAll("[role=option]");
        options.forEach(function (o, i) { o.id = list.id + "-" + i; });
        field.removeAttribute("aria-activedescendant");
        list.hidden = options.length === 0;
        if (options.length && options.length !== had) {
          say(options.length + (options.length === 1 ? " end user" : " end users") + " suggested: arrow keys to choose, Enter to take.");
        }
      }, function () {});
  }
  function activeOption(field) {
    var id = field.getAttribute("aria-activedescendant");
    return id ? document.getElementById(id) : null;
  }
  function moveSuggestion(field, step) {
    var options = Array.prototype.slice.call(suggestList(field).querySelectorAll("[role=option]"));
    var at = options.indexOf(activeOption(field));
    at = at < 0 ? (step > 0 ? 0 : options.length - 1) : (at + step + options.length) % options.length;
    options.forEach(function (o, i) { o.setAttribute("aria-selected", i === at ? "true" : "false"); });
    field.setAttribute("aria-activedescendant", options[at].id);
    options[at].scrollIntoView({ block: "nearest" });
  }
  function takeSuggestion(field, option) {
    var key = option.getAttribute("data-value"), word = currentWord(field), v = field.value;
    var rest = v.slice(field.selectionStart), stop = rest.search(/[\n,]/);
    var after = stop < 0 ? "" : rest.slice(stop);
    var typed = key + (after === "" ? "\n" : "");
    field.value = v.slice(0, word.start) + typed + after;
    field.setSelectionRange(word.start + typed.length, word.start + typed.length);
    closeSuggestions(field);
    field.dispatchEvent(new Event("input", { bubbles: true })); // unsaved now
    say(key + " added.");
  }
  document.addEventListener("input", function (e) {
    var field = e.target;
    if (!field.hasAttribute || !field.hasAttribute("data-suggest-users")) return;
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(function () { askSuggestions(field); }, 150);
  });
  document.addEventListener("keydown", function (e) {
    var field = e.target;
    if (!field.hasAttribute || !field.hasAttribute("data-suggest-users")) return;
    var list = suggestList(field);
    if (!list || list.hidden) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      moveSuggestion(field, e.key === "ArrowDown" ? 1 : -1);
    } else if (e.key === "Enter" && activeOption(field)) {
      e.preventDefault();
      takeSuggestion(field, activeOption(field));
    } else if (e.key === "Escape" || e.key === "Tab") {
      if (e.key === "Escape") e.preventDefault();
      closeSuggestions(field);
    }
  });
  // A click takes an option; pressing it keeps the focus in the field.
  document.addEventListener("mousedown", function (e) {
    var option = e.target.closest && e.target.closest(".suggestions [role=option]");
    if (!option) return;
    e.preventDefault();
    var field = document.querySelector('[aria-controls="' + option.parentElement.id + '"]');
    if (field) takeSuggestion(field, option);
  });
  document.addEventListener("focusout", function (e) {
    if (e.target.hasAttribute && e.target.hasAttribute("data-suggest-users")) closeSuggestions(e.target);
  });

  // htmx.onLoad runs for the first page and for every piece of HTML htmx swaps in.
  if (window.htmx) {
    htmx.onLoad(enhance);
  } else {
    document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  }
  afterChange(); // deferred: the page is parsed
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
    if (d && d.open && (e.target === d || (e.target.closest && e.target.closest("[data-search-close]")))) closeSearch(d);
  });

  // closeSearch closes the dialog and gives the focus back to what had it.
  // Here, not in a close listener: the close event comes a task later, after
  // a click that may already have opened the dialog again.
  function closeSearch(d) {
    var back = opener;
    opener = null;
    d.close();
    if (back && back.isConnected && typeof back.focus === "function") back.focus();
  }

  // In the dialog: the arrows move between the input and the results (Enter
  // on one follows its link), typing on a result goes on in the input, and
  // Escape closes (also a search input's Escape, which would only clear it).
  document.addEventListener("keydown", function (e) {
    var d = dialog();
    if (!d || !d.open || !d.contains(e.target)) return;
    var list = hits(d), at = list.indexOf(document.activeElement), field = input();
    if (e.key === "Escape") {
      e.preventDefault();
      closeSearch(d);
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
