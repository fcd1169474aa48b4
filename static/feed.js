// The feed page's one enhancement: "Notify me on this device". Registers the service worker
// (/sw.js), subscribes this browser to Web Push with the server's VAPID key (the button's
// data-key) and posts the subscription to the inbox (the button's data-url). Without
// JavaScript, or in a browser without push, the offer stays hidden and the page works as is.
//
// It also places the device offers (push and "Add a passkey"): a person who has a passkey
// and whose device already has push on (or cannot have it) finds them folded into "This
// device" at the bottom; everyone else sees them under the header. Outside a secure context
// it shows the note saying why neither is offered and what rings the phone instead.
"use strict";

(function () {
  // The page's words in the reader's language (the data-words the page carries when it is
  // not English), each with its English to fall back on.
  var words = (function () {
    try {
      var el = document.getElementById("words");
      return (el && JSON.parse(el.getAttribute("data-words"))) || {};
    } catch (e) {
      return {};
    }
  })();
  function w(key, english) {
    return typeof words[key] === "string" ? words[key] : english;
  }

  // No Web Push and no passkeys outside a secure context (plain http off this machine): the
  // server shows the note when its public URL is such; an address it does not know of (a
  // LAN address without SAYSO_PUBLIC_URL) is found here.
  var note = document.getElementById("no-push");
  if (note && !window.isSecureContext) note.hidden = false;

  var offers = document.getElementById("device-offers");
  var folded = document.getElementById("this-device");
  // Only a person with a passkey gets the fold (the server leaves it out otherwise).
  function place(pushOn) {
    if (!offers) return;
    if (folded && pushOn) {
      folded.appendChild(offers);
      folded.hidden = false;
    }
    offers.hidden = false;
  }

  var section = document.getElementById("push");
  var button = document.getElementById("push-subscribe");
  var status = document.getElementById("push-status");
  if (!section || !button || !status) return place(true);
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    return place(true);
  }

  var key = button.getAttribute("data-key");
  var url = button.getAttribute("data-url");
  var registration = navigator.serviceWorker.register("/sw.js").then(function () {
    return navigator.serviceWorker.ready;
  });

  function say(text) {
    status.textContent = text;
  }

  function keyBytes(b64url) {
    var b64 = b64url.replace(/-/g, "+").replace(/_/g, "/");
    b64 += "===".slice((b64.length + 3) % 4);
    var raw = atob(b64);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function sameKey(sub) {
    var had = sub.options && sub.options.applicationServerKey;
    if (!had) return true;
    var a = new Uint8Array(had);
    var b = keyBytes(key);
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function store(sub) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(sub),
    }).then(function (resp) {
      if (resp.status !== 201) throw new Error("the server answered " + resp.status);
    });
  }

  // A subscription made with another key (the server's key changed) cannot be reused.
  function subscribe(reg) {
    return reg.pushManager.getSubscription().then(function (old) {
      var ready = old && !sameKey(old) ? old.unsubscribe() : Promise.resolve();
      return ready.then(function () {
        return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
      });
    });
  }

  button.addEventListener("click", function () {
    button.disabled = true;
    say(w("push-asking", "Asking for permission…"));
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") {
          throw new Error(w("push-not-allowed", "notifications are not allowed for this site; allow them in the browser's settings"));
        }
        say(w("push-subscribing", "Subscribing…"));
        return registration.then(subscribe);
      })
      .then(store)
      .then(function () {
        say(w("push-will-be-notified", "This device will be notified of new decisions."));
      })
      .catch(function (e) {
        say(w("push-failed", "Could not turn on notifications:") + " " + (e && e.message ? e.message : e));
      })
      .then(function () {
        button.disabled = false;
      });
  });

  section.hidden = false;
  if (Notification.permission === "denied") {
    say(w("push-blocked", "Notifications are blocked for this site; allow them in the browser's settings."));
    return place(false);
  }
  // Already subscribed: tell the server again (harmless), in case it forgot this device.
  registration
    .then(function (reg) {
      return reg.pushManager.getSubscription();
    })
    .then(function (sub) {
      var on = !!sub && Notification.permission === "granted" && sameKey(sub);
      place(on);
      if (on) {
        say(w("push-on", "This device is notified of new decisions."));
        return store(sub);
      }
    })
    .catch(function () {
      place(false);
    });
})();
