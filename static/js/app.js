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
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var words = {
      403: "You are not allowed to do that with your role.",
      404: "That no longer exists.",
      500: "The server failed; nothing was saved. Try again, and tell an admin if it repeats.",
    };
    toast(words[xhr.status] || ("The server answered " + xhr.status + "; nothing was saved."), "bad");
  });
  document.addEventListener("htmx:sendError", function () {
    toast("The server did not answer; your last action was not saved. Try again.", "bad");
  });

  // On a narrow screen the navigation folds behind a Menu button. The fold is CSS keyed
  // on the button's aria-expanded, and only once this script marks the bar, so without
  // script the links simply wrap.
  var bar = document.querySelector(".topbar");
  var menu = bar && bar.querySelector(".nav-toggle");
  if (!menu) return;
  function setOpen(open) { menu.setAttribute("aria-expanded", open ? "true" : "false"); }
  bar.classList.add("nav-foldable");
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
