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
})();
