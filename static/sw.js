// sayso's service worker: shows the notifications the server pushes for new and pending
// decisions, closes them once the decision is resolved, and opens the answer page on a tap.
// Served at /sw.js so its scope is the whole site.
//
// Push payloads (JSON):
//   {"type": "show", "tag": "<decision id>", "title": "…", "body": "<question>", "url": "<answer page>",
//    "answers": ["Allow", "Deny"],   (answers: a tool approval's buttons, posted to the page)
//    "labels": {"Allow": "Erlauben", "Deny": "Ablehnen"},   (labels: each button's words,
//                                                            in the person's language)
//    "opens": ["Allow"]}   (opens: buttons that open the page to confirm there, as an Allow
//                           that needs the person's passkey)
//   {"type": "close", "tag": "<decision id>"}
"use strict";

self.addEventListener("install", function () {
  self.skipWaiting();
});

self.addEventListener("activate", function (event) {
  event.waitUntil(self.clients.claim());
});

self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = {};
  }
  event.waitUntil(handlePush(data));
});

function handlePush(data) {
  if (data.type === "close" && data.tag) {
    return self.registration
      .getNotifications({ tag: String(data.tag) })
      .then(function (shown) {
        shown.forEach(function (n) {
          n.close();
        });
      });
  }
  if (data.type !== "show") {
    return Promise.resolve();
  }
  var answers = Array.isArray(data.answers) ? data.answers.map(String) : [];
  var opens = Array.isArray(data.opens) ? data.opens.map(String) : [];
  return self.registration.showNotification(String(data.title || "sayso"), {
    body: String(data.body || ""),
    tag: data.tag ? String(data.tag) : undefined,
    // A reminder replaces the first notification and should be noticed again.
    renotify: Boolean(data.tag),
    icon: "/static/icon.svg",
    actions: opens.concat(answers).map(function (a) {
      var labels = data.labels && typeof data.labels === "object" ? data.labels : {};
      return { action: a, title: typeof labels[a] === "string" ? labels[a] : a };
    }),
    data: { url: sameOriginUrl(data.url), answers: answers, opens: opens },
  });
}

// A button of a tool approval: post that answer to the page (only a POST decides); if that
// fails, open the page asking to confirm the same answer.
function answerFromNotification(url, answer) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ value: answer }),
    // The bound device's cookie goes along, so the answer records which device it was.
    credentials: "same-origin",
  }).then(function (resp) {
    if (!resp.ok && resp.status !== 409) {
      throw new Error("answer refused: " + resp.status);
    }
  }).catch(function () {
    return self.clients.openWindow(url + "?confirm=" + encodeURIComponent(answer));
  });
}

// Only the service's own pages are opened.
function sameOriginUrl(url) {
  try {
    var u = new URL(String(url), self.location.origin);
    return u.origin === self.location.origin ? u.href : self.location.origin + "/";
  } catch (e) {
    return self.location.origin + "/";
  }
}

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var data = event.notification.data || {};
  var url = data.url || self.location.origin + "/";
  if (event.action && (data.answers || []).indexOf(event.action) >= 0) {
    event.waitUntil(answerFromNotification(url, event.action));
    return;
  }
  if (event.action && (data.opens || []).indexOf(event.action) >= 0) {
    event.waitUntil(self.clients.openWindow(url + "?confirm=" + encodeURIComponent(event.action)));
    return;
  }
  event.waitUntil(
    self.clients
      .matchAll({ type: "window", includeUncontrolled: true })
      .then(function (windows) {
        for (var i = 0; i < windows.length; i++) {
          if (windows[i].url === url && "focus" in windows[i]) {
            return windows[i].focus();
          }
        }
        return self.clients.openWindow(url);
      })
  );
});
