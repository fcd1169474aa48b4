//! A software authenticator and the ceremonies of the feed page and the approval page as
//! plain HTTP: what a browser with a passkey would send, and what someone holding only a
//! feed link (a bound device) could send instead. Mocks no part of sayso: it stands in for
//! the person's authenticator, which the browser tests replace with Chromium's virtual one.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ciborium::Value as Cbor;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{DerSignature, SigningKey};
use rand::Rng;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::server::{TestServer, send};
use crate::support::no_redirects;

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A P-256 passkey with its counter: user presence and verification flags always set.
pub struct Authenticator {
    key: SigningKey,
    pub id: Vec<u8>,
    count: u32,
    origin: String,
    rp_id: String,
}

impl Authenticator {
    /// A new passkey for the server's public URL.
    pub fn new(srv: &TestServer) -> Self {
        let url = url::Url::parse(&srv.base).unwrap();
        let mut rng = rand::rng();
        let key = loop {
            let secret: [u8; 32] = rng.random();
            if let Ok(key) = SigningKey::from_slice(&secret) {
                break key;
            }
        };
        Authenticator {
            key,
            id: rng.random::<[u8; 16]>().to_vec(),
            count: 0,
            origin: url.origin().ascii_serialization(),
            rp_id: url.host_str().unwrap().to_string(),
        }
    }

    fn client_data(&self, kind: &str, challenge: &str) -> Vec<u8> {
        json!({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": false})
            .to_string()
            .into_bytes()
    }

    fn auth_data(&self, extra_flags: u8) -> Vec<u8> {
        let mut a = Sha256::digest(self.rp_id.as_bytes()).to_vec();
        a.push(0x01 | 0x04 | extra_flags);
        a.extend_from_slice(&self.count.to_be_bytes());
        a
    }

    /// `navigator.credentials.create` for `challenge` (base64url): the body's two parts.
    pub fn register(&self, challenge: &str) -> Value {
        let mut auth = self.auth_data(0x40);
        auth.extend_from_slice(&[0u8; 16]);
        auth.extend_from_slice(&(self.id.len() as u16).to_be_bytes());
        auth.extend_from_slice(&self.id);
        let point = self.key.verifying_key().to_encoded_point(false);
        let cose = Cbor::Map(vec![
            (Cbor::from(1), Cbor::from(2)),
            (Cbor::from(3), Cbor::from(-7)),
            (Cbor::from(-1), Cbor::from(1)),
            (Cbor::from(-2), Cbor::Bytes(point.x().unwrap().to_vec())),
            (Cbor::from(-3), Cbor::Bytes(point.y().unwrap().to_vec())),
        ]);
        ciborium::into_writer(&cose, &mut auth).unwrap();
        let att = Cbor::Map(vec![
            (Cbor::from("fmt"), Cbor::from("none")),
            (Cbor::from("attStmt"), Cbor::Map(vec![])),
            (Cbor::from("authData"), Cbor::Bytes(auth)),
        ]);
        let mut att_bytes = Vec::new();
        ciborium::into_writer(&att, &mut att_bytes).unwrap();
        json!({
            "client_data_json": b64(&self.client_data("webauthn.create", challenge)),
            "attestation_object": b64(&att_bytes),
        })
    }

    /// `navigator.credentials.get` for `challenge` (base64url): an assertion as the pages
    /// post it.
    pub fn sign(&mut self, challenge: &str) -> Value {
        self.count += 1;
        let client_data = self.client_data("webauthn.get", challenge);
        let auth = self.auth_data(0);
        let mut signed = auth.clone();
        signed.extend_from_slice(&Sha256::digest(&client_data));
        let sig: DerSignature = self.key.sign(&signed);
        json!({
            "id": b64(&self.id),
            "client_data_json": b64(&client_data),
            "authenticator_data": b64(&auth),
            "signature": b64(sig.as_bytes()),
        })
    }
}

/// The device cookie (`name=value`) a browser gets for opening the feed link `token`.
pub async fn bind_device(srv: &TestServer, token: &str) -> String {
    let resp = no_redirects()
        .get(srv.url(&format!("/inbox/{token}")))
        .send()
        .await
        .unwrap();
    let set = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.contains("sayso_device=") && !c.contains("Max-Age=0"))
        .unwrap_or_else(|| panic!("no device cookie: {resp:?}"));
    set.split(';').next().unwrap().to_string()
}

/// `GET /inbox/passkeys/new` on the bound device.
pub async fn creation_options(srv: &TestServer, cookie: &str) -> Value {
    let (st, options) = send(
        srv.client
            .get(srv.url("/inbox/passkeys/new"))
            .header("cookie", cookie),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{options}");
    options
}

/// `POST /inbox/passkeys` as the feed page's script sends it.
pub async fn post_passkey(srv: &TestServer, cookie: &str, body: &Value) -> (StatusCode, Value) {
    send(
        srv.client
            .post(srv.url("/inbox/passkeys"))
            .header("cookie", cookie)
            .header("sec-fetch-site", "same-origin")
            .json(body),
    )
    .await
}

/// Adds `new` from the bound device, consenting with `existing` when the server asks for
/// one of the person's passkeys first.
pub async fn add_passkey(
    srv: &TestServer,
    cookie: &str,
    new: &Authenticator,
    existing: Option<&mut Authenticator>,
) -> (StatusCode, Value) {
    let options = creation_options(srv, cookie).await;
    let mut body = new.register(options["challenge"].as_str().unwrap());
    if let (Some(consent), Some(with)) = (options["existing"]["challenge"].as_str(), existing) {
        body["existing"] = with.sign(consent);
    }
    post_passkey(srv, cookie, &body).await
}

/// The step-up challenge of the approval link `link` (its `/passkey` options).
pub async fn step_up_challenge(srv: &TestServer, link: &str) -> (StatusCode, Value) {
    send(srv.client.get(format!("{link}/passkey"))).await
}

/// An Allow through the approval link `link` with `assertion`.
pub async fn allow_with(
    srv: &TestServer,
    link: &str,
    assertion: Option<Value>,
) -> (StatusCode, Value) {
    let mut body = json!({"value": "Allow"});
    if let Some(a) = assertion {
        body["passkey"] = a;
    }
    send(srv.client.post(link).json(&body)).await
}
