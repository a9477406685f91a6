// Keyboard-first review. Every key maps to a visible control carrying data-key, so the
// keyboard and the mouse always do the same thing, and the page works without this file.
(function () {
  "use strict";

  var pendingG = false;

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
  // Only requests that replace the card count: autocomplete look-ups do not.
  function busy() {
    var card = document.getElementById("card");
    return !!card && !!card.querySelector('.htmx-request[hx-target="#card"]');
  }

  function closeOptions() {
    var open = false;
    Array.prototype.forEach.call(document.querySelectorAll(".options-box"), function (box) {
      if (box.children.length) { box.innerHTML = ""; open = true; }
    });
    return open;
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

  function toggleHelp(force) {
    var help = document.getElementById("help");
    if (!help) return;
    var show = typeof force === "boolean" ? force : help.hidden;
    help.hidden = !show;
    if (show) help.querySelector(".help-card").focus && help.querySelector(".help-card").focus();
  }

  function startReject() {
    var select = document.getElementById("reject-reason");
    if (!select) return false;
    select.classList.add("armed");
    select.focus();
    if (window.kgToast) window.kgToast("Reject: press 1–6 for the reason.", "");
    return true;
  }

  function chooseReason(digit) {
    var select = document.getElementById("reject-reason");
    var option = select && select.options[digit];
    if (!option || !option.value) return;
    select.value = option.value;
    if (option.value === "other") {
      var note = document.getElementById("reject-note");
      if (note) note.focus();
      return;
    }
    var form = document.getElementById("reject-form");
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  // Queue page: j/k move through rows, x selects, Enter opens.
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
    if (event.target.id === "reject-reason" && /^[1-9]$/.test(key)) {
      event.preventDefault();
      if (!busy()) chooseReason(parseInt(key, 10));
      return;
    }
    if (key === "Escape") {
      var help = document.getElementById("help");
      if (help && !help.hidden) { toggleHelp(false); event.preventDefault(); return; }
      if (closeOptions()) { event.preventDefault(); return; }
      if (busy()) { event.preventDefault(); return; }
      if (press("Escape")) { event.preventDefault(); return; }
      if (typing(event.target)) { event.target.blur(); return; }
    }
    if (key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = event.target.closest && event.target.closest("form[data-submit-key]");
      if (form) {
        event.preventDefault();
        if (busy()) return;
        if (form.requestSubmit) form.requestSubmit(); else form.submit();
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
        var box = row && row.querySelector("input[type=checkbox]");
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
    if (press(key)) event.preventDefault();
  });

  // Autocomplete: picking a concept fills the visible name and the hidden id.
  document.addEventListener("click", function (event) {
    var option = event.target.closest && event.target.closest(".option");
    if (!option) return;
    var role = option.dataset.role;
    var input = document.getElementById("edit-" + role);
    var hidden = document.getElementById("edit-" + role + "-id");
    if (input) input.value = option.dataset.name;
    if (hidden) hidden.value = option.dataset.id;
    var box = document.getElementById(role + "-options");
    if (box) box.innerHTML = "";
    if (input) input.focus();
  });
  // Typing a new name forgets the picked concept: accepting will then create the new one.
  document.addEventListener("input", function (event) {
    var role = event.target.dataset && event.target.dataset.autocomplete;
    if (!role) return;
    var hidden = document.getElementById("edit-" + role + "-id");
    if (hidden) hidden.value = "";
  });

  // After a new card arrives, put the reviewer's eyes (and focus) on it.
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.target.id === "card" || (event.detail.target && event.detail.target.id === "card")) {
      var card = document.getElementById("card");
      if (card) {
        card.scrollIntoView({ block: "start" });
        var first = card.querySelector(".edit-form input[name=source_name]");
        if (first) first.focus();
        else if (document.activeElement && document.activeElement !== document.body) {
          document.activeElement.blur();
        }
      }
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
