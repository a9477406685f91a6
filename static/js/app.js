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
    toast(words[xhr.status] || ("The server answered " + xhr.status + "; nothing was saved."), "bad");
  });
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
