// Keyboard-first review. Every key maps to a visible control carrying data-key, so the
// keyboard and the mouse always do the same thing, and the page works without this file.
(function () {
  "use strict";

  var pendingG = false;

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

  // --- Help ------------------------------------------------------------------------------

  var helpOpener = null;
  function toggleHelp(force) {
    var help = document.getElementById("help");
    if (!help) return;
    var show = typeof force === "boolean" ? force : help.hidden;
    help.hidden = !show;
    if (show) {
      helpOpener = document.activeElement;
      var box = help.querySelector(".help-card");
      if (box) box.focus();
    } else if (helpOpener && helpOpener.focus) {
      helpOpener.focus();
    }
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

  function searchNow(input) {
    if (window.htmx) window.htmx.trigger(input, "input");
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
    setTimeout(function () {
      if (document.activeElement !== input) closeCombo(input);
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
    return true;
  }

  function selectedRow() {
    return document.querySelector(".queue-row.selected");
  }

  document.addEventListener("keydown", function (event) {
    var key = event.key;
    if (isCombo(event.target) && comboKey(event)) return;
    if (event.target.id === "reject-reason" && /^[1-9]$/.test(key)) {
      event.preventDefault();
      if (!busy()) chooseReason(parseInt(key, 10));
      return;
    }
    if (key === "Escape") {
      var help = document.getElementById("help");
      if (help && !help.hidden) { toggleHelp(false); event.preventDefault(); return; }
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

    if (pendingG) {
      pendingG = false;
      if (key === "q") { window.location.href = "/review/"; event.preventDefault(); }
      if (key === "r") { window.location.href = "/review/focus/"; event.preventDefault(); }
      return;
    }
    if (key === "g") { pendingG = true; setTimeout(function () { pendingG = false; }, 1200); return; }
    if (key === "?") { toggleHelp(); event.preventDefault(); return; }
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
        var open = selectedRow();
        if (open) { window.location.href = open.dataset.href; event.preventDefault(); }
        return;
      }
    }
    if (key === "r" && startReject()) { event.preventDefault(); return; }
    var card = document.getElementById("card");
    if (key.length === 1 && card && "aesjkuKR".indexOf(key) >= 0 && !control(key)) {
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

  // After a new card arrives, put the reviewer's eyes (and focus) on it.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!(event.target.id === "card" || (target && target.id === "card"))) return;
    var card = document.getElementById("card");
    if (!card) return;
    card.scrollIntoView({ block: "start" });
    revealQuote(card);
    var first = card.querySelector('.edit-form [role="combobox"], .edit-form [data-edit-first]');
    var failed = card.querySelector(".card-messages .flash.bad");
    if (first && failed) {
      // A refused edit: back to the field the refusal is most likely about.
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

  document.addEventListener("click", function (event) {
    if (event.target.id === "help") toggleHelp(false);
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
