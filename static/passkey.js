// Passkeys (WebAuthn), the two places they are used:
// - the feed: "Add a passkey on this device" asks the server for creation options (the
//   button's data-url + "/new"), creates the passkey and posts it to data-url; when the
//   person has a passkey already, one of theirs is asked first (the options' "existing"),
//   and a second tap makes the new one, posted with that assertion;
// - a tool approval whose rule wants a passkey: an Allow first fetches options (the form's
//   data-passkey-url: a challenge bound to this decision), asks the passkey, and posts the
//   assertion with the answer. Deny posts as it is.
// Without JavaScript or passkeys, the feed offers nothing and an Allow is refused with a
// message saying the passkey is needed; Deny still works.
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

  function bytes(b64url) {
    var b64 = String(b64url).replace(/-/g, "+").replace(/_/g, "/");
    b64 += "===".slice((b64.length + 3) % 4);
    var raw = atob(b64);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function b64url(buffer) {
    var a = new Uint8Array(buffer);
    var s = "";
    for (var i = 0; i < a.length; i++) s += String.fromCharCode(a[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function credentials(list) {
    return (list || []).map(function (c) {
      return { type: "public-key", id: bytes(c.id) };
    });
  }

  // The server's JSON, or an error carrying its message (the first detail names the problem).
  function json(resp) {
    return resp.json().catch(function () { return {}; }).then(function (body) {
      if (resp.ok) return body;
      var e = body && body.error;
      var detail = e && e.details && e.details[0] && e.details[0].message;
      throw new Error(detail || (e && e.message) || "the server answered " + resp.status);
    });
  }

  function reason(e) {
    if (e && e.name === "NotAllowedError") return w("passkey-not-used", "the passkey was not used (cancelled or timed out)");
    return e && e.message ? e.message : String(e);
  }

  // The options of a navigator.credentials.get, as the server gives them.
  function getOptions(o) {
    return {
      challenge: bytes(o.challenge),
      rpId: o.rpId,
      timeout: o.timeout,
      userVerification: o.userVerification,
      allowCredentials: credentials(o.allowCredentials),
    };
  }

  // An assertion as the server reads it: each part base64url.
  function assertion(cred) {
    return {
      id: b64url(cred.rawId),
      client_data_json: b64url(cred.response.clientDataJSON),
      authenticator_data: b64url(cred.response.authenticatorData),
      signature: b64url(cred.response.signature),
    };
  }

  var supported = !!(window.PublicKeyCredential && navigator.credentials);

  // The feed: add a passkey on this device.
  var section = document.getElementById("passkey");
  var add = document.getElementById("passkey-add");
  var addStatus = document.getElementById("passkey-add-status");
  if (section && add && addStatus && supported) {
    var url = add.getAttribute("data-url");
    var label = add.textContent;
    // Someone who has a passkey adds another only with one of theirs. That one is asked on
    // the first tap and the new one made on a second: some browsers let a page ask for a
    // passkey only straight after a tap. The server's challenges last five minutes.
    var CONSENT_MS = 4 * 60 * 1000;
    var consented = null;

    var finish = function (text) {
      consented = null;
      add.textContent = label;
      addStatus.textContent = text;
    };

    var make = function (o, existing) {
      addStatus.textContent = w("passkey-screen-lock", "Use this device's screen lock to make the passkey…");
      return navigator.credentials
        .create({
          publicKey: {
            challenge: bytes(o.challenge),
            rp: o.rp,
            user: { id: bytes(o.user.id), name: o.user.name, displayName: o.user.displayName },
            pubKeyCredParams: o.pubKeyCredParams,
            timeout: o.timeout,
            attestation: o.attestation,
            authenticatorSelection: o.authenticatorSelection,
            excludeCredentials: credentials(o.excludeCredentials),
          },
        })
        .then(function (cred) {
          var body = {
            client_data_json: b64url(cred.response.clientDataJSON),
            attestation_object: b64url(cred.response.attestationObject),
          };
          if (existing) body.existing = existing;
          return fetch(url, {
            method: "POST",
            credentials: "same-origin",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify(body),
          }).then(json);
        })
        .then(function () {
          finish(w("passkey-added", "A passkey was added on this device: approvals that need it are allowed with it."));
        });
    };

    add.addEventListener("click", function () {
      add.disabled = true;
      var step;
      if (consented && Date.now() - consented.at < CONSENT_MS) {
        step = make(consented.options, consented.existing);
      } else {
        consented = null;
        addStatus.textContent = w("passkey-getting-ready", "Getting ready…");
        step = fetch(url + "/new", { credentials: "same-origin" })
          .then(json)
          .then(function (o) {
            if (!o.existing) return make(o, null);
            addStatus.textContent = w("passkey-first-existing", "First use a passkey you already have…");
            return navigator.credentials.get({ publicKey: getOptions(o.existing) }).then(function (cred) {
              consented = { options: o, existing: assertion(cred), at: Date.now() };
              add.textContent = w("passkey-make-new", "Make the new passkey");
              addStatus.textContent = w("passkey-agreed", "Your passkey agreed. Now tap “Make the new passkey” to make the new one on this device.");
            });
          });
      }
      step
        .catch(function (e) {
          finish(w("passkey-none-added", "No passkey was added:") + " " + reason(e));
        })
        .then(function () {
          add.disabled = false;
        });
    });
    section.hidden = false;
  }

  // An approval that needs the passkey for its Allow.
  var form = document.getElementById("answer");
  var status = document.getElementById("passkey-status");
  if (!form || !status || !form.getAttribute("data-passkey-url")) return;
  var optionsUrl = form.getAttribute("data-passkey-url");
  var added = [];
  var busy = false;

  function put(name, value) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.appendChild(input);
    added.push(input);
  }

  form.addEventListener("submit", function (event) {
    var button = event.submitter;
    var value = button && button.name === "value" ? button.value : "";
    if (value.indexOf("Allow") !== 0) return;
    event.preventDefault();
    if (busy) return;
    if (!supported) {
      status.textContent = w("passkey-unsupported", "This browser cannot use passkeys, and this Allow needs one. Deny works without it.");
      return;
    }
    busy = true;
    status.textContent = w("passkey-use-to-allow", "Use your passkey to allow…");
    fetch(optionsUrl, { credentials: "same-origin" })
      .then(json)
      .then(function (o) {
        return navigator.credentials.get({ publicKey: getOptions(o) }).then(assertion);
      })
      .then(function (a) {
        status.textContent = w("passkey-sending", "Sending…");
        put("value", value);
        put("passkey_id", a.id);
        put("passkey_client_data", a.client_data_json);
        put("passkey_authenticator_data", a.authenticator_data);
        put("passkey_signature", a.signature);
        // submit() sends the form without firing this handler again (and without the
        // button, whose value is in the hidden input).
        form.submit();
      })
      .catch(function (e) {
        status.textContent = w("passkey-not-allowed", "Not allowed:") + " " + reason(e);
        busy = false;
      });
  });

  // Back to a page kept in memory: nothing of the last try is sent again.
  window.addEventListener("pageshow", function () {
    for (var i = 0; i < added.length; i++) added[i].remove();
    added = [];
    busy = false;
  });
})();
