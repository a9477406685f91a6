// Keyboard-first review. Every key maps to a visible control carrying data-key, so the
// keyboard and the mouse always do the same thing, and the page works without this file.
(function () {
  "use strict";

  function isCombo(el) {
    return !!(el && el.getAttribute && el.getAttribute("role") === "combobox");
  }

  // Keys are text while the reviewer writes: in a text field, a select, or anywhere in the
  // edit form. A checkbox or radio elsewhere (a queue row, a filter) keeps the shortcuts.
  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    if (target.closest && target.closest("form[data-submit-key]")) return true;
    if (tag === "input") return !/^(checkbox|radio|button|submit|reset)$/.test(target.type);
    return tag === "textarea" || tag === "select" || !!target.isContentEditable;
  }

  // While the card is fetching its next state, a key would act on the card being replaced
  // (deciding it twice, or racing two swaps); such keys are ignored until it arrives.
  // Only requests that replace the card count: concept look-ups do not.
  function busy() {
    var card = document.getElementById("card");
    return !!card && !!card.querySelector('.htmx-request[hx-target="#card"]');
  }

  function scope() {
    return document.getElementById("card") || document;
  }

  function control(key) {
    return (
      scope().querySelector('[data-key="' + key + '"]') ||
      scope().querySelector('[data-also-key="' + key + '"]') ||
      document.querySelector('[data-key="' + key + '"]')
    );
  }

  function press(key) {
    var el = control(key);
    if (!el || el.disabled) return false;
    el.click();
    return true;
  }

  function say(words, kind) {
    if (window.kgToast) window.kgToast(words, kind || "");
  }

  // --- Reject: r arms the reason list, a digit chooses ------------------------------------

  function startReject() {
    var select = document.getElementById("reject-reason");
    if (!select) return false;
    select.classList.add("armed");
    select.focus();
    say("Reject: 1–5 rejects at once with that reason; 6 (Other) asks for a note.");
    return true;
  }

  function submit(form) {
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  function chooseReason(digit) {
    var select = document.getElementById("reject-reason");
    var option = select && select.options[digit];
    if (!option || !option.value) return;
    select.value = option.value;
    if (option.value === "other") {
      var note = document.getElementById("reject-note");
      if (note) note.focus();
      say("Other: say why in the note, then Enter.");
      return;
    }
    submit(document.getElementById("reject-form"));
  }

  // "Other" needs words: say so at once and keep the chosen reason, rather than asking the
  // server to refuse it.
  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (form.id !== "reject-form") return;
      var select = form.querySelector("#reject-reason");
      var note = form.querySelector("#reject-note");
      if (!select || !select.value) {
        event.preventDefault();
        event.stopImmediatePropagation();
        if (select) select.focus();
        say("Choose a reason first: 1–6.", "bad");
        return;
      }
      if (select.value === "other" && note && !note.value.trim()) {
        event.preventDefault();
        event.stopImmediatePropagation();
        note.focus();
        say("Say why in a few words when the reason is “Other”.", "bad");
      }
    },
    true
  );

  // --- The concept picker (ARIA 1.2 combobox with a listbox popup) ------------------------

  function comboParts(input) {
    var role = input.dataset.autocomplete;
    return {
      role: role,
      box: document.getElementById(role + "-options"),
      list: document.getElementById(role + "-listbox"),
      id: document.getElementById("edit-" + role + "-id"),
      proposal: document.getElementById("edit-" + role + "-proposal"),
      create: document.getElementById("edit-" + role + "-create"),
    };
  }

  function options(parts) {
    return parts.list ? Array.prototype.slice.call(parts.list.querySelectorAll('[role="option"]')) : [];
  }

  function setActive(input, index) {
    var parts = comboParts(input);
    var all = options(parts);
    all.forEach(function (o, i) {
      o.setAttribute("aria-selected", i === index ? "true" : "false");
      o.classList.toggle("active", i === index);
    });
    if (index >= 0 && all[index]) {
      input.setAttribute("aria-activedescendant", all[index].id);
      all[index].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function activeIndex(input) {
    var all = options(comboParts(input));
    var id = input.getAttribute("aria-activedescendant");
    for (var i = 0; i < all.length; i++) if (all[i].id === id) return i;
    return -1;
  }

  function closeCombo(input) {
    var parts = comboParts(input);
    if (parts.box) parts.box.innerHTML = "";
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function closeAllCombos() {
    var open = false;
    Array.prototype.forEach.call(document.querySelectorAll('[role="combobox"]'), function (input) {
      var parts = comboParts(input);
      if (parts.box && parts.box.children.length) open = true;
      closeCombo(input);
    });
    return open;
  }

  function pick(input, option) {
    var parts = comboParts(input);
    var kind = option.dataset.kind;
    input.value = option.dataset.name;
    if (parts.id) parts.id.value = kind === "concept" ? option.dataset.id : "";
    if (parts.proposal) parts.proposal.value = kind === "proposal" ? option.dataset.id : "";
    if (parts.create) parts.create.value = kind === "create" ? "1" : "";
    input.classList.toggle("creating", kind === "create");
    closeCombo(input);
    input.focus();
    say(
      kind === "create"
        ? "“" + option.dataset.name + "” will be created as a new concept."
        : "Picked “" + option.dataset.name + "”."
    );
  }

  // The choices for the name as it stands (↓ in a closed picker), asked for directly: the
  // field's "input changed" trigger ignores a name that has not changed (a card just swapped
  // in after a refused edit, say), may not be bound yet on a card still settling, and an
  // input event would forget the concept picked.
  function searchNow(input) {
    var box = comboParts(input).box;
    var url = input.getAttribute("hx-get");
    if (!window.htmx || !box || !url) return;
    var values = {};
    values[input.name] = input.value;
    window.htmx.ajax("GET", url, { source: input, target: box, swap: "innerHTML", values: values });
  }

  function comboKey(event) {
    var input = event.target;
    var all = options(comboParts(input));
    var open = all.length > 0;
    var key = event.key;
    if (key === "ArrowDown" || key === "ArrowUp") {
      event.preventDefault();
      if (!open) { searchNow(input); return true; }
      var i = activeIndex(input);
      if (key === "ArrowDown") i = i < all.length - 1 ? i + 1 : 0;
      else i = i > 0 ? i - 1 : all.length - 1;
      setActive(input, i);
      return true;
    }
    if (key === "Enter" && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();  // Enter picks; Ctrl+Enter submits the form
      var at = activeIndex(input);
      if (open && at >= 0) pick(input, all[at]);
      else if (open) { setActive(input, 0); say("Press Enter again to pick “" + all[0].dataset.name + "”."); }
      else say("Type a name, then ↓ to see the choices.");
      return true;
    }
    if (key === "Escape" && open) {
      event.preventDefault();
      closeCombo(input);
      return true;
    }
    if (key === "Tab" && open) closeCombo(input);
    return false;
  }

  document.addEventListener("mousedown", function (event) {
    var option = event.target.closest && event.target.closest('[role="option"][data-role]');
    if (!option) return;
    event.preventDefault();  // keep focus in the field
    var input = document.getElementById("edit-" + option.dataset.role);
    if (input) pick(input, option);
  });

  // Typing a name forgets the concept picked before: it must be picked again (or created).
  document.addEventListener("input", function (event) {
    if (!isCombo(event.target)) return;
    var parts = comboParts(event.target);
    if (parts.id) parts.id.value = "";
    if (parts.proposal) parts.proposal.value = "";
    if (parts.create) parts.create.value = "";
    event.target.classList.remove("creating");
  });

  document.addEventListener("focusin", function (event) {
    if (isCombo(event.target)) event.target.select();
  });

  document.addEventListener("focusout", function (event) {
    if (!isCombo(event.target)) return;
    var input = event.target;
    // A field swapped out (the card re-rendered after a refused edit) must not close its
    // successor's list, which has the same ids: the list ↓ asked for could vanish.
    setTimeout(function () {
      if (input.isConnected && document.activeElement !== input) closeCombo(input);
    }, 150);
  });

  // A fresh list of choices: expanded, nothing active until the reviewer moves.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || !target.classList || !target.classList.contains("options-box")) return;
    var role = target.id.replace(/-options$/, "");
    var input = document.getElementById("edit-" + role);
    if (!input) return;
    var has = !!target.querySelector('[role="option"]');
    input.setAttribute("aria-expanded", has ? "true" : "false");
    input.removeAttribute("aria-activedescendant");
    if (document.activeElement !== input) closeCombo(input);
  });

  function whyNot(card, key) {
    var status = card.dataset.status;
    if (!card.dataset.proposal) return "Nothing is left to review in this view.";
    if (key === "u") return "There is nothing of yours to undo.";
    if (key === "i") return "A proposal of this kind names no relation or concept type to guide it.";
    if (key === "d") {
      if (card.querySelector("#in-discussion")) return "This card is already in discussion; press c to read it.";
      if (status && status !== "pending" && status !== "held") {
        return "This proposal was already " + status + "; press c to comment on it instead.";
      }
      return "Your role reads the discussion; reviewers and curators ask and answer.";
    }
    if (card.querySelector(".waiting-curator")) {
      return "Only curators decide this kind of proposal; press s for the next card.";
    }
    if (status && status !== "pending" && status !== "held") {
      return "This proposal was already " + status + "; press s for the next open one.";
    }
    if (key === "e") return card.dataset.notEditable || "This proposal cannot be edited.";
    if (key === "K" || key === "R") return "This card has no contradiction to resolve.";
    return "Your role reads the queue but does not decide proposals.";
  }

  // --- Queue page: j/k move through rows, x selects, Enter opens -------------------------

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll(".queue-row"));
  }

  function moveRow(step) {
    var all = rows();
    if (!all.length) return false;
    var current = all.findIndex(function (r) { return r.classList.contains("selected"); });
    var next = Math.max(0, Math.min(all.length - 1, current + step));
    if (current === -1) next = 0;
    all.forEach(function (r) { r.classList.remove("selected"); });
    all[next].classList.add("selected");
    all[next].scrollIntoView({ block: "nearest" });
    // Focus on a row (from the Rows link, or a ticked box) moves with the selection.
    var active = document.activeElement;
    if (active && active.closest && active.closest(".queue-row") && active.closest(".queue-row") !== all[next]) {
      var link = all[next].querySelector("a[href]");
      if (link) link.focus();
    }
    return true;
  }

  function selectedRow() {
    return document.querySelector(".queue-row.selected");
  }

  // The queue's parts, each a key away (the links at the top carry the keys): / the
  // filters, b the bulk bar, the rows (j and k move through them).
  function jumpTarget(where) {
    if (where === "filters") {
      return document.querySelector('#filters input[name="status"]:checked') ||
        document.querySelector("#filters input, #filters select");
    }
    if (where === "bulk") return document.getElementById("bulk-action");
    if (where === "rows") {
      if (!selectedRow()) moveRow(1);
      var row = selectedRow();
      return row && row.querySelector("a[href]");
    }
    return null;
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-focus]");
    if (!link) return;
    var el = jumpTarget(link.dataset.focus);
    if (!el) return;
    event.preventDefault();
    el.focus();
  });

  function queueUndo() {
    return document.getElementById("bulk-undo") || document.getElementById("undo-button");
  }

  // After a bulk decision the button pressed is gone with the old panel: focus goes to the
  // new panel (its words, then Undo), or to "Yes" after a preview; the rows it decided say
  // so, and the counts are asked for again.
  function markDecided(ids) {
    (ids || "").split(",").forEach(function (id) {
      if (!/^[0-9]+$/.test(id)) return;
      var box = document.querySelector('.queue-row input[name="ids"][value="' + id + '"]');
      var row = box && box.closest(".queue-row");
      if (!row) return;
      box.checked = false;
      box.disabled = true;
      box.setAttribute("aria-label", "Proposal " + id + " was just decided");
      row.classList.add("decided");
      var flags = row.querySelector("td.flags");
      if (flags && !flags.querySelector(".just-decided")) {
        var badge = document.createElement("span");
        badge.className = "badge just-decided";
        badge.textContent = "just decided";
        flags.appendChild(badge);
      }
    });
  }

  function refreshCounts() {
    var filters = document.getElementById("filters");
    if (!filters || !filters.dataset.countsUrl || !document.getElementById("filter-counts")) return;
    if (!window.htmx) return;
    var q = document.querySelector('#bulk-form input[name="q"]');
    var query = q && q.value ? "?" + q.value : "";
    window.htmx.ajax("GET", filters.dataset.countsUrl + query, {
      target: "#filter-counts",
      swap: "outerHTML",
    });
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!((target && target.id === "bulk-panel") || event.target.id === "bulk-panel")) return;
    var panel = document.getElementById("bulk-panel");
    if (!panel) return;
    if (panel.dataset.applied) {
      markDecided(panel.dataset.done);
      refreshCounts();
      panel.focus();
      return;
    }
    var yes = document.getElementById("bulk-confirm");
    (yes && !yes.disabled ? yes : panel).focus();
  });

  document.addEventListener("keydown", function (event) {
    var key = event.key;
    if (isCombo(event.target) && comboKey(event)) return;
    if (event.target.id === "reject-reason" && /^[1-9]$/.test(key)) {
      event.preventDefault();
      if (!busy()) chooseReason(parseInt(key, 10));
      return;
    }
    if (key === "Escape") {
      // (The key help closes in app.js, whose listener runs first.)
      if (closeAllCombos()) { event.preventDefault(); return; }
      if (busy()) { event.preventDefault(); return; }
      if (press("Escape")) { event.preventDefault(); return; }
      if (typing(event.target)) { event.target.blur(); return; }
    }
    if (key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = event.target.closest && event.target.closest("form[data-submit-key]");
      if (form) {
        event.preventDefault();
        if (busy()) return;
        submit(form);
      }
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;

    // ? (the key help) and g then a letter (go to a page) are app.js's, on every page.
    if (busy()) { if (key.length === 1) event.preventDefault(); return; }

    var onQueue = rows().length > 0 && !document.getElementById("card");
    if (onQueue) {
      if (key === "j") { moveRow(1); event.preventDefault(); return; }
      if (key === "k") { moveRow(-1); event.preventDefault(); return; }
      if (key === "x") {
        var row = selectedRow();
        var box = row && row.querySelector("input[type=checkbox]:not(:disabled)");
        if (box) { box.checked = !box.checked; event.preventDefault(); }
        return;
      }
      if (key === "Enter") {
        // Enter on a button or a link (Yes in the bulk panel, say) is that control's own.
        var on = event.target;
        if (on !== document.body && on.id !== "main" && !(on.closest && on.closest(".queue-row"))) return;
        var open = selectedRow();
        if (open) { window.location.href = open.dataset.href; event.preventDefault(); }
        return;
      }
    }
    if (!document.getElementById("card") && document.getElementById("queue-results") && key === "u") {
      var undo = queueUndo();
      if (undo) { undo.click(); event.preventDefault(); }
      else say("There is nothing of yours to undo.", "bad");
      return;
    }
    if (key === "r" && startReject()) { event.preventDefault(); return; }
    var card = document.getElementById("card");
    if (key.length === 1 && card && "aesjkuKRid".indexOf(key) >= 0 && !control(key)) {
      // A key with no control on this card: say why instead of doing nothing.
      say(whyNot(card, key), "bad");
      event.preventDefault();
      return;
    }
    if (press(key)) event.preventDefault();
  });

  // The quote is what a reviewer decides on: when a card opens, its highlighted quote is
  // scrolled into the evidence box (which grows to hold a long quote whole), and the page
  // just enough to show it between the top bar and the sticky decision bar.
  function revealQuote(card) {
    var box = card && card.querySelector("#evidence-text");
    var marks = box ? box.querySelectorAll("mark") : [];
    if (!marks.length) return;
    var first = marks[0];
    var last = marks[marks.length - 1];
    var line = parseFloat(getComputedStyle(box).lineHeight) || 24;
    var height = last.getBoundingClientRect().bottom - first.getBoundingClientRect().top;
    if (box.scrollHeight > box.clientHeight) {
      if (height + 2 * line > box.clientHeight) {
        box.style.maxHeight = Math.ceil(height + 3 * line) + "px";
      }
      var above = first.getBoundingClientRect().top - box.getBoundingClientRect().top;
      var room = box.clientHeight - height;
      box.scrollTop = Math.max(0, box.scrollTop + above - Math.max(line, room / 2));
    }
    var bar = card.querySelector(".actions");
    var topbar = document.querySelector(".topbar");
    var upper = topbar ? topbar.getBoundingClientRect().bottom : 0;
    var lower = Math.min(window.innerHeight, bar ? bar.getBoundingClientRect().top : Infinity);
    var top = first.getBoundingClientRect().top;
    var bottom = last.getBoundingClientRect().bottom;
    if (bottom > lower - 4) window.scrollBy(0, Math.min(bottom - lower + 8, top - upper - 8));
    else if (top < upper) window.scrollBy(0, top - upper - 8);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () {
      revealQuote(document.getElementById("card"));
    });
  } else {
    revealQuote(document.getElementById("card"));
  }

  // The edit form's field a refusal names: its id (edit-source, edit-relation) or name.
  function fieldNamed(card, field) {
    if (!/^[a-z_]+$/.test(field)) return null;
    var form = card.querySelector(".edit-form");
    return form && (form.querySelector("#edit-" + field) || form.querySelector('[name="' + field + '"]'));
  }

  // After a new card arrives, put the reviewer's eyes (and focus) on it.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!(event.target.id === "card" || (target && target.id === "card"))) return;
    var card = document.getElementById("card");
    if (!card) return;
    // The count beside the title asks for itself anew (a decision, a question, a skip may
    // change it); an event, not an out-of-band part, so an answer whose form was replaced
    // meanwhile, or a card on a page without the count, never misses its target.
    document.body.dispatchEvent(new CustomEvent("kg-card"));
    card.scrollIntoView({ block: "start" });
    revealQuote(card);
    var first = card.querySelector('.edit-form [role="combobox"], .edit-form [data-edit-first]');
    var failed = card.querySelector(".card-messages .flash.bad");
    var named = failed && failed.dataset.field && fieldNamed(card, failed.dataset.field);
    if (named) {
      // A refused edit: back in the field the refusal names, which says so (↓ in a
      // concept picker shows its choices).
      named.setAttribute("aria-invalid", "true");
      var said = (named.getAttribute("aria-describedby") || "").split(" ");
      if (said.indexOf(failed.id) === -1) named.setAttribute("aria-describedby", (failed.id + " " + said.join(" ")).trim());
      named.focus();
    } else if (first && failed) {
      // A refused edit that names no field: back to the first one.
      first.focus();
    } else if (first) {
      first.focus();
      first.select();
    } else if (card.querySelector("#reject-reason option[selected]") && failed) {
      var note = document.getElementById("reject-note");
      if (note) note.focus();
    } else if (document.activeElement && document.activeElement !== document.body) {
      document.activeElement.blur();
    }
  });

  // The talk panel (i: guideline, c: comments, d: a question): put focus in it when it
  // arrives, on the question's field when asking, so the keyboard goes on from there.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "talk-panel") return;
    var first = target.querySelector("textarea[data-talk-focus]") || target.querySelector("[data-talk-focus]");
    if (first) first.focus();
  });
})();

// Merge review: the "keep this one" radios belong to the Merge form (form="accept-form"), so
// the choice is sent with or without this script; here the card says what will happen.
document.addEventListener("change", function (event) {
  if (!event.target.matches || !event.target.matches("[data-merge-keep]")) return;
  var kept = event.target.value;
  document.querySelectorAll(".merge-side").forEach(function (side) {
    var keep = side.dataset.concept === kept;
    side.classList.toggle("keep", keep);
    var badge = side.querySelector(".merge-role");
    if (badge) {
      badge.textContent = keep ? "kept" : "merged away";
      badge.className = "badge merge-role " + (keep ? "ok" : "warn");
    }
    var name = document.getElementById(keep ? "merge-survivor-name" : "merge-loser-name");
    if (name && side.dataset.name) name.textContent = side.dataset.name;
  });
});

// Team review's leases: while the reviewer is at work on this page (it is in view and
// they pressed a key or touched it since the last beat), tell the server once a minute
// to keep the cards it leased them. Idle or hidden, the beat stops and the leases lapse,
// so colleagues get those cards.
(function () {
  "use strict";
  var active = true;
  function touched() { active = true; }
  document.addEventListener("keydown", touched, true);
  document.addEventListener("pointerdown", touched, true);
  document.addEventListener("scroll", touched, true);
  setInterval(function () {
    var beat = document.getElementById("lease-beat");
    if (!beat || !active || document.visibilityState !== "visible") return;
    active = false;
    var headers = {};
    try {
      headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    } catch (e) {
      headers = {};
    }
    fetch(beat.dataset.url, { method: "POST", headers: headers, credentials: "same-origin" })
      .catch(function () {});
  }, 60000);
})();

// The next card, ahead of the keypress. While the reviewer reads a card, the page fetches
// the card that comes after it (the same request Skip makes, marked prefetch=1, so the
// card read now stays leased too). A decision (a, a reject, an edit accepted) is then
// posted saying which card the page holds ready (X-KG-Prefetched), and the server answers
// with only the words and the undo button (X-KG-Decided): no next card to find, lease
// and draw on the way. The page puts the card it holds up with them. A decision refused
// answers as ever, with the card and the words why; nothing changes before the server
// has answered. Skip puts the held card up at once and sends its request behind it.
(function () {
  "use strict";
  var ahead = null;

  function open(card) {
    return !!card && (card.dataset.status === "pending" || card.dataset.status === "held");
  }

  function fetchAhead() {
    var card = document.getElementById("card");
    // The same card back in its edit form (e, or an edit refused): the card held for
    // after it still comes next, and the edit's accept puts it up like a or r does.
    if (ahead && card && card.dataset.proposal === ahead.from && card.querySelector(".edit-form")) return;
    ahead = null;
    var skip = card && card.querySelector("#skip-button[hx-get]");
    if (!open(card) || !skip || !card.querySelector("#accept-form")) return;
    var from = card.dataset.proposal;
    var url = skip.getAttribute("hx-get") + "&prefetch=1";
    fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        var now = document.getElementById("card");
        if (!html || !now || now.dataset.proposal !== from) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("card");
        if (!next || !next.dataset.proposal || next.dataset.proposal === from) return;
        ahead = { from: from, next: next.dataset.proposal, html: next.outerHTML };
      })
      .catch(function () { ahead = null; });
  }

  document.addEventListener("htmx:configRequest", function (event) {
    var form = event.detail.elt;
    var card = document.getElementById("card");
    if (!ahead || !form || !form.matches) return;
    if (!form.matches("#accept-form, #reject-form, #card .edit-form")) return;
    if (!card || card.dataset.proposal !== ahead.from) return;
    event.detail.headers["X-KG-Prefetched"] = ahead.next;
    form.kgAhead = ahead;
    ahead = null;
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    // (Its elt is the target; the form that asked is the request's.)
    var form = event.detail.requestConfig && event.detail.requestConfig.elt;
    var up = form && form.kgAhead;
    var xhr = event.detail.xhr;
    if (!up) return;
    form.kgAhead = null;
    if (!xhr || xhr.status !== 200 || !xhr.getResponseHeader("X-KG-Decided")) {
      // Refused (or busy): nothing changed, so the card held is still the next one; the
      // page keeps it for the next try (an edit form has no Skip to fetch it again by).
      ahead = up;
      return;
    }
    var card = document.getElementById("card");
    var said = document.createElement("div");
    said.innerHTML = xhr.responseText;
    said = said.querySelector("#kg-decided");
    var next = cardOf(up);
    if (!card || !next || !said) return;  // as it came: let htmx swap what was sent
    event.detail.shouldSwap = false;
    var words = said.querySelector(".flash");
    var messages = next.querySelector(".card-messages");
    if (words && messages) messages.appendChild(words);
    var undo = said.querySelector(".undo-form");
    var old = next.querySelector(".undo-form");
    if (undo && old) old.replaceWith(undo);
    else if (undo) next.appendChild(undo);
    show(card, next);
    fetchAhead();
  });

  function cardOf(up) {
    var holder = document.createElement("div");
    holder.innerHTML = up.html;
    return holder.firstElementChild;
  }

  function show(card, next) {
    card.replaceWith(next);
    htmx.process(next);
    htmx.trigger(next, "htmx:afterSwap", { target: next });
  }

  // Skip (s) with the next card held: it goes up at once, and the skip's own request
  // (which moves the reviewer's leases on, as ever) follows in the background; the card
  // after it is fetched once that has answered.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var card = document.getElementById("card");
    if (!ahead || !elt || elt.id !== "skip-button" || !card) return;
    if (card.dataset.proposal !== ahead.from || !card.contains(elt)) return;
    var url = elt.getAttribute("hx-get");
    var up = ahead;
    ahead = null;
    var next = cardOf(up);
    if (!next) return;  // as it was: the skip's request brings the card
    event.preventDefault();
    show(card, next);
    fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .catch(function () { return null; })
      .then(function () { fetchAhead(); });
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.target;
    if (target && target.id === "card") fetchAhead();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fetchAhead);
  else fetchAhead();
})();
