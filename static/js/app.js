// Site-wide behaviour: errors from htmx requests are said in words, never swallowed.
(function () {
  "use strict";
  function toast(message, kind) {
    var box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = "toast " + (kind || "");
    box.hidden = false;
    clearTimeout(box._timer);
    box._timer = setTimeout(function () { box.hidden = true; }, 6000);
  }
  window.kgToast = toast;
  // The event core.refusals triggers (HX-Trigger) to say a refusal in words.
  var TOAST_EVENT = "kgRefused";
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    // A refusal in words (core.refusals: HX-Trigger names kgRefused) has been said in the
    // toast already; a 403 or 404 of that kind keeps its own words, not the generic ones.
    if ((xhr.getResponseHeader("HX-Trigger") || "").indexOf(TOAST_EVENT) !== -1) return;
    var words = {
      403: "You are not allowed to do that with your role.",
      404: "That no longer exists.",
      500: "The server failed; nothing was saved. Try again, and tell an admin if it repeats.",
    };
    toast(serverWords(xhr) || words[xhr.status] ||
      ("The server answered " + xhr.status + "; nothing was saved."), "bad");
  });
  // The words a failed response says itself (a 503's "The database is not answering…"):
  // its alert's text, or a JSON answer's detail; short, plain text only.
  function serverWords(xhr) {
    var type = xhr.getResponseHeader("Content-Type") || "";
    var text = "";
    try {
      if (type.indexOf("json") !== -1) {
        text = String(JSON.parse(xhr.responseText).detail || "");
      } else if (type.indexOf("html") !== -1) {
        var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
        var alert = doc.querySelector("[role=alert]");
        text = alert ? alert.textContent : "";
      }
    } catch (e) { text = ""; }
    text = text.replace(/\s+/g, " ").trim();
    return text.length > 0 && text.length <= 300 ? text : "";
  }
  // A request the server refused at the door (a control character in a field, say)
  // answers 400 with HX-Trigger: {"kgRefused": {"message": "..."}} and swaps nothing.
  document.addEventListener(TOAST_EVENT, function (event) {
    toast((event.detail && event.detail.message) || "The server did not accept that; nothing was saved.", "bad");
  });
  document.addEventListener("htmx:sendError", function () {
    toast("The server did not answer; your last action was not saved. Try again.", "bad");
  });

  // A value to copy (a new API token) is selected whole when it takes the focus.
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("input[data-select-on-focus]")) {
      event.target.select();
    }
  });

  // --- The key help (?), on every page -------------------------------------------------
  // The dialog is in base.html; each page lists its own keys in it. While it is open, focus
  // stays inside it (Tab cycles), Esc or ? closes it and focus goes back where it was, and
  // no other key reaches the page (a page's "a" must not accept behind the help).

  // Keys are text while someone writes in a field; a checkbox or a radio keeps them.
  function typing(target) {
    var tag = (target && target.tagName || "").toLowerCase();
    if (tag === "input") return !/^(checkbox|radio|button|submit|reset|range|file)$/.test(target.type);
    return tag === "textarea" || tag === "select" || !!(target && target.isContentEditable);
  }
  window.kgTyping = typing;

  var help = document.getElementById("help");
  var helpOpener = null;
  function helpOpen() { return !!help && !help.hidden; }
  function focusables() {
    return Array.prototype.filter.call(
      help.querySelectorAll("a[href], button:not([disabled]), input, select, textarea, [tabindex]"),
      function (el) { return el.tabIndex >= 0 && el.getClientRects().length > 0; }
    );
  }
  function toggleHelp(show) {
    if (!help) return;
    if (typeof show !== "boolean") show = help.hidden;
    if (show === helpOpen()) return;
    help.hidden = !show;
    document.documentElement.classList.toggle("help-open", show);
    if (show) {
      helpOpener = document.activeElement;
      var box = help.querySelector(".help-card");
      if (box) box.focus();
    } else {
      if (helpOpener && helpOpener.focus && document.contains(helpOpener)) helpOpener.focus();
      // The opener may not take focus (the page's body): never leave it in the hidden help,
      // where Chromium keeps it until its next style pass.
      if (help.contains(document.activeElement)) document.activeElement.blur();
    }
  }
  window.kgHelp = toggleHelp;
  document.addEventListener("click", function (event) {
    var t = event.target;
    if (!help || !t.closest) return;
    if (t === help || t.closest("#help-close")) { toggleHelp(false); return; }
    if (t.closest('[aria-controls="help"]')) { event.preventDefault(); toggleHelp(true); }
  });
  // Focus that leaves the open dialog (a click outside, a script) is brought back.
  document.addEventListener("focusin", function (event) {
    if (helpOpen() && !help.contains(event.target)) {
      var box = help.querySelector(".help-card");
      if (box) box.focus();
    }
  });

  // g then a letter goes to the page whose link in the bar says so (data-go).
  var pendingG = false;
  var gTimer = null;
  document.addEventListener("keydown", function (event) {
    var key = event.key;
    if (helpOpen()) {
      // Listeners after this one (the page's keys) never see a key while the help is open.
      event.stopImmediatePropagation();
      if (key === "Escape" || key === "?") { event.preventDefault(); toggleHelp(false); return; }
      if (key === "Tab") {
        var all = focusables();
        if (!all.length) { event.preventDefault(); return; }
        var first = all[0], last = all[all.length - 1];
        var at = all.indexOf(document.activeElement);
        if (event.shiftKey && at <= 0) { event.preventDefault(); last.focus(); }
        else if (!event.shiftKey && (at === -1 || at === all.length - 1)) { event.preventDefault(); first.focus(); }
      }
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (pendingG) {
      pendingG = false;
      clearTimeout(gTimer);
      var link = /^[a-z]$/.test(key) && document.querySelector('#site-nav a[data-go="' + key + '"]');
      if (link) { event.preventDefault(); event.stopImmediatePropagation(); window.location.href = link.href; }
      else event.stopImmediatePropagation();  // "g x": neither key acts on the page
      return;
    }
    if (key === "g" && document.querySelector("#site-nav a[data-go]")) {
      pendingG = true;
      gTimer = setTimeout(function () { pendingG = false; }, 1200);
      event.stopImmediatePropagation();
      return;
    }
    if (key === "?" && help) {
      event.preventDefault();
      event.stopImmediatePropagation();
      toggleHelp(true);
      return;
    }
    // A page's field that a key puts the focus in (data-focus-key: "/" for a search).
    var field = key.length === 1 && document.querySelector('[data-focus-key="' + CSS.escape(key) + '"]');
    if (field) {
      event.preventDefault();
      field.focus();
      if (field.select) field.select();
    }
  });

  // --- Wide tables and charts scroll inside their own box ------------------------------
  // A .scroll-x box (role="region" with a name, in the template) takes the focus only while
  // its content is wider than it, so the keyboard can scroll it (arrow keys) on a phone and
  // a laptop does not get a tab stop that does nothing.
  function scrollRegions(root) {
    Array.prototype.forEach.call((root || document).querySelectorAll(".scroll-x"), function (box) {
      if (box.scrollWidth > box.clientWidth + 1) box.setAttribute("tabindex", "0");
      else box.removeAttribute("tabindex");
    });
  }
  scrollRegions();
  window.addEventListener("resize", function () { scrollRegions(); });
  window.addEventListener("load", function () { scrollRegions(); });
  document.addEventListener("htmx:afterSettle", function () { scrollRegions(); });

  // When the links do not fit on the bar's one line (that depends on the role's links and
  // the user's name, so it is measured, not a breakpoint), they fold behind a Menu button.
  // The fold is CSS keyed on .nav-folded and the button's aria-expanded; without script
  // the bar wraps instead.
  var bar = document.querySelector(".topbar");
  var menu = bar && bar.querySelector(".nav-toggle");
  if (!menu) return;
  var brand = bar.querySelector(".brand");
  function setOpen(open) { menu.setAttribute("aria-expanded", open ? "true" : "false"); }
  function fold() {
    bar.classList.remove("nav-folded");
    var line = brand.getBoundingClientRect().bottom;
    var wrapped = Array.prototype.some.call(bar.children, function (el) {
      return el.getClientRects().length > 0 && el.getBoundingClientRect().top >= line;
    });
    bar.classList.toggle("nav-folded", wrapped);
    if (!wrapped) setOpen(false);
  }
  fold();
  window.addEventListener("resize", fold);
  window.addEventListener("load", fold);
  // The worker badge changes its words as it polls; longer words may no longer fit.
  document.addEventListener("htmx:afterSettle", function (event) {
    if (bar.contains(event.target)) fold();
  });
  menu.addEventListener("click", function () {
    setOpen(menu.getAttribute("aria-expanded") !== "true");
  });
  bar.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && menu.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      menu.focus();
    }
  });
})();
