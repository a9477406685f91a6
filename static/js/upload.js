// Curriculum page: documents are sent one request per file (two at a time), so each row
// shows its own progress bar and then its own result in words, and a bad file never stops
// the others. Choosing files or dropping them on the zone sends them at once. Without
// script the form posts every file together and the page comes back with a row per file.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form || !window.FormData || !window.XMLHttpRequest) return;
  var input = document.getElementById("upload-files");
  var zone = document.getElementById("drop-zone");
  var rows = document.getElementById("upload-rows");
  var status = document.getElementById("upload-status");
  var submit = document.getElementById("upload-submit");
  var token = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var maxBytes = parseInt(form.dataset.maxBytes, 10);
  var maxSize = form.dataset.maxSize;
  var accepted = form.dataset.accept.split(",");
  var AT_ONCE = 2;
  var queue = [];
  var running = 0;
  var stored = 0;

  form.classList.add("js-upload");
  zone.querySelector(".drop-words").hidden = false;
  submit.hidden = true;  // choosing the files sends them

  // As kgreview/graph/upload.py's human_size: decimal units, as disks and browsers count.
  function size(n) {
    if (n < 1000) return n + (n === 1 ? " byte" : " bytes");
    var units = ["kB", "MB", "GB", "TB"];
    for (var i = 0; i < units.length; i++) {
      n = n / 1000;
      if (n < 1000 || i === units.length - 1) return String(Math.round(n * 10) / 10) + " " + units[i];
    }
  }

  function suffix(name) {
    var dot = name.lastIndexOf(".");
    return dot > 0 ? name.slice(dot).toLowerCase() : "";
  }

  function say(words) {
    // Each result is added, not replaced, so two finishing together are both announced.
    var line = document.createElement("span");
    line.textContent = words + ". ";
    status.appendChild(line);
  }

  function element(tag, className, text) {
    var el = document.createElement(tag);
    el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function addRow(file) {
    var li = element("li", "upload-row");
    var row = {
      file: file,
      li: li,
      bar: element("progress", "upload-progress"),
      result: element("span", "upload-result", "waiting"),
    };
    row.bar.max = 100;
    row.bar.value = 0;
    row.bar.setAttribute("aria-label", "Sending " + file.name);
    li.appendChild(element("span", "upload-name", file.name));
    li.appendChild(element("span", "upload-size", size(file.size)));
    li.appendChild(row.bar);
    li.appendChild(row.result);
    rows.appendChild(li);
    rows.hidden = false;
    return row;
  }

  function finish(row, ok, message, url) {
    row.bar.remove();
    row.li.classList.add(ok ? "ok" : "bad");
    row.result.textContent = "";
    if (url) {
      var link = document.createElement("a");
      link.href = url;
      link.textContent = message;
      row.result.appendChild(link);
    } else {
      row.result.textContent = message;
    }
    say(row.file.name + ": " + (ok ? message : "not saved, " + message));
  }

  function failure(xhr) {
    if (xhr.responseURL && xhr.responseURL.indexOf("/login/") !== -1) {
      return "you are signed out: sign in again, then send this file again";
    }
    var words = {
      0: "the server did not answer; nothing was saved, try again",
      403: "refused: only curators can add documents (or the page is stale: reload it)",
      413: "the server refused the file as too large; nothing was saved",
      500: "the server failed while reading this file; nothing was saved. Tell an admin if it repeats",
    };
    return words[xhr.status] || "the server answered " + xhr.status + "; nothing was saved";
  }

  function send(row) {
    running++;
    row.result.textContent = "sending";
    var data = new FormData();
    data.append("csrfmiddlewaretoken", token);
    data.append("files", row.file, row.file.name);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRFToken", token);
    xhr.upload.onprogress = function (event) {
      if (event.lengthComputable) row.bar.value = Math.round((event.loaded / event.total) * 100);
    };
    xhr.upload.onload = function () {
      row.bar.value = 100;
      row.result.textContent = "reading the document";
    };
    xhr.onload = function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
      var result = body && body.results && body.results[0];
      if (result && result.error) {
        finish(row, false, result.error);
      } else if (result) {
        finish(row, true, result.message, result.url);
        if (result.outcome !== "unchanged") stored++;
      } else {
        finish(row, false, (body && body.error) || failure(xhr));
      }
      done();
    };
    xhr.onerror = function () {
      finish(row, false, failure({ status: 0 }));
      done();
    };
    xhr.send(data);
  }

  function pump() {
    while (running < AT_ONCE && queue.length) send(queue.shift());
  }

  function done() {
    running--;
    pump();
    if (running || queue.length) return;
    if (stored) document.getElementById("upload-next").hidden = false;
    // The list below gains the new sources.
    if (window.htmx) {
      window.htmx.ajax("GET", form.dataset.listUrl, { target: "#source-table", swap: "outerHTML" });
    }
  }

  function take(files) {
    Array.prototype.forEach.call(files, function (file) {
      var row = addRow(file);
      var type = suffix(file.name);
      if (file.size > maxBytes) {
        finish(row, false, "file is " + size(file.size) + ", over the limit of " + maxSize +
          " for one file (KG_MAX_SOURCE_BYTES); not sent");
      } else if (accepted.indexOf(type) === -1) {
        finish(row, false, "unsupported file type '" + (type || "(none)") + "': kgreview reads " +
          accepted.join(", ") + "; not sent");
      } else {
        queue.push(row);
      }
    });
    pump();
  }

  input.addEventListener("change", function () {
    if (!input.files.length) return;
    take(input.files);
    input.value = "";  // the same file can be chosen again
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (input.files.length) take(input.files);
  });

  function hasFiles(event) {
    return event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") !== -1;
  }
  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("dragging");
    });
  });
  ["dragleave", "dragend"].forEach(function (name) {
    zone.addEventListener(name, function (event) {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove("dragging");
    });
  });
  zone.addEventListener("drop", function (event) {
    if (!hasFiles(event)) return;
    event.preventDefault();
    zone.classList.remove("dragging");
    take(event.dataTransfer.files);
  });
  // A file dropped beside the zone must not make the browser leave the page (and the
  // uploads still running).
  ["dragover", "drop"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      if (hasFiles(event) && !zone.contains(event.target)) event.preventDefault();
    });
  });
  window.addEventListener("beforeunload", function (event) {
    if (running || queue.length) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
})();
