//! Passkeys belong to a person. They are added from a device bound to that person (the feed
//! page, never an API key), and asked for when a tool approval's policy rule wants a
//! step-up: each Allow then counts only with an assertion of one of the answering person's
//! own passkeys, made for that decision.
//!
//! A person's first passkey takes only their bound device: the feed link is then the secret.
//! Every later one takes an assertion of one they already have, bound to that very
//! registration, so holding the feed link (or a bound device) no longer adds a passkey once
//! the person has one. Each one added is announced on the person's channels
//! (`passkey_notices.rs`); the operator lists and removes them with `sayso person passkeys`.
//!
//! The relying party is the public URL: its host is the rpId, its origin the only origin
//! accepted. Challenges are stateless (domain::webauthn) and spent in the store once
//! answered, so none counts twice, on any replica.

use rand::TryRngCore;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::devices::Viewer;
use super::{Service, ServiceError, Tokens, now};
use crate::domain::approval::allows;
use crate::domain::people::Person;
use crate::domain::webauthn::{
    Assertion, AssertionInput, Ceremony, ES256, Expected, StoredPasskey, WebauthnError,
    add_passkey_subject, b64, issue_challenge, spent_record_expiry, unb64, verify_assertion,
    verify_registration,
};
use crate::domain::{Decision, Resolution};

/// The setting holding the key passkey challenges are made with.
const CHALLENGE_KEY_SETTING: &str = "passkey_challenge_key";
/// How long the browser gives the person to use their passkey, in milliseconds.
const CEREMONY_TIMEOUT_MS: u64 = 120_000;
/// The most passkeys one person keeps: enough for every device they have.
const MAX_PASSKEYS: usize = 20;
/// The most of a User-Agent kept with a passkey.
const MAX_USER_AGENT_CHARS: usize = 200;

/// The site passkeys are made for: the public URL's origin and host.
struct RelyingParty {
    origin: String,
    rp_id: String,
}

impl Service {
    fn relying_party(&self) -> Result<RelyingParty, ServiceError> {
        let url = url::Url::parse(&self.settings().public_url)
            .map_err(|e| ServiceError::Internal(format!("the public URL is not a URL: {e}")))?;
        let rp_id = url
            .host_str()
            .ok_or_else(|| ServiceError::Internal("the public URL has no host".into()))?
            .to_string();
        Ok(RelyingParty {
            origin: url.origin().ascii_serialization(),
            rp_id,
        })
    }

    async fn challenge_key(&self) -> Result<String, ServiceError> {
        Ok(self
            .store()
            .setting_or_init(CHALLENGE_KEY_SETTING, &Tokens::generate_key_hex())
            .await?)
    }

    async fn new_challenge(
        &self,
        ceremony: Ceremony,
        subject: Uuid,
    ) -> Result<Vec<u8>, ServiceError> {
        let key = self.challenge_key().await?;
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng
            .try_fill_bytes(&mut nonce)
            .map_err(|e| ServiceError::Internal(format!("no random source: {e}")))?;
        let now = now().unix_timestamp();
        Ok(issue_challenge(
            key.as_bytes(),
            ceremony,
            subject,
            now,
            nonce,
        ))
    }

    /// Records a challenge as answered; a second answer to it is refused.
    async fn spend(&self, challenge: &[u8]) -> Result<(), ServiceError> {
        let hash = super::tokens::sha256_hex(challenge);
        let kept_until = OffsetDateTime::from_unix_timestamp(spent_record_expiry(challenge))
            .map_err(|e| ServiceError::Internal(format!("a challenge's time: {e}")))?;
        if !self
            .store()
            .spend_challenge(&hash, kept_until, now())
            .await?
        {
            return Err(refused(WebauthnError::ReusedChallenge));
        }
        Ok(())
    }

    /// The options for `navigator.credentials.create` on the person's bound device. When
    /// the person has a passkey already, `existing` holds the options of the
    /// `navigator.credentials.get` that must come first: one of their passkeys consents to
    /// the new one, with a challenge that counts for this registration only.
    pub async fn passkey_creation_options(&self, viewer: &Viewer) -> Result<Value, ServiceError> {
        let rp = self.relying_party()?;
        let person = &viewer.person;
        let passkeys = self.store().passkeys(person.id).await?;
        let challenge = self.new_challenge(Ceremony::Register, person.id).await?;
        let existing = if passkeys.is_empty() {
            Value::Null
        } else {
            let subject = add_passkey_subject(person.id, &challenge);
            let consent = self.new_challenge(Ceremony::AddPasskey, subject).await?;
            get_options(&rp, &consent, &passkeys)
        };
        let name = if person.is_inbox_own() {
            viewer.inbox.name.clone()
        } else {
            format!("{} ({})", person.name, viewer.inbox.name)
        };
        Ok(json!({
            "challenge": b64(&challenge),
            "rp": {"id": rp.rp_id, "name": "sayso"},
            "user": {
                "id": b64(person.id.as_bytes()),
                "name": name,
                "displayName": format!("sayso · {name}"),
            },
            "pubKeyCredParams": [{"type": "public-key", "alg": ES256}],
            "timeout": CEREMONY_TIMEOUT_MS,
            "attestation": "none",
            "authenticatorSelection": {"residentKey": "preferred", "userVerification": "required"},
            "excludeCredentials": credential_list(&passkeys),
            "existing": existing,
        }))
    }

    /// Adds the passkey a bound device made (`{"client_data_json", "attestation_object"}`,
    /// base64url) to the device's person. A person who has a passkey must send an assertion
    /// of one of them as `existing` (`{"id", "client_data_json", "authenticator_data",
    /// "signature"}`), made with the challenge handed out with this registration's. The new
    /// passkey is announced on the person's channels. Every problem is a validation error at
    /// `passkey`.
    pub async fn register_passkey(
        &self,
        viewer: &Viewer,
        body: &Value,
        user_agent: Option<&str>,
    ) -> Result<StoredPasskey, ServiceError> {
        let field = |name: &'static str| {
            body.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| ServiceError::invalid(name, "is required (base64url)"))
                .and_then(|s| unb64(s, name).map_err(refused))
        };
        let client_data = field("client_data_json")?;
        let attestation = field("attestation_object")?;
        let person = &viewer.person;
        let rp = self.relying_party()?;
        let key = self.challenge_key().await?;
        let expected = expected(&rp, &key, Ceremony::Register, person.id);
        let cred = verify_registration(&client_data, &attestation, &expected).map_err(refused)?;
        let passkeys = self.store().passkeys(person.id).await?;
        if passkeys.len() >= MAX_PASSKEYS {
            return Err(ServiceError::invalid(
                "passkey",
                format!("you already have {MAX_PASSKEYS} passkeys, the most one person keeps"),
            ));
        }
        if !passkeys.is_empty() {
            let Some(existing) = body.get("existing").filter(|v| !v.is_null()) else {
                return Err(ServiceError::invalid(
                    "passkey",
                    "you already have a passkey: adding another needs one of yours first (the \
                     page asks for it), or the operator's `sayso person passkeys`",
                ));
            };
            let input: AssertionInput = serde_json::from_value(existing.clone()).map_err(|e| {
                ServiceError::invalid(
                    "passkey",
                    format!("`existing` is not an assertion (id, client_data_json, authenticator_data, signature): {e}"),
                )
            })?;
            let subject = add_passkey_subject(person.id, &cred.challenge);
            self.check_assertion(&passkeys, &input, Ceremony::AddPasskey, subject)
                .await?;
        }
        self.spend(&cred.challenge).await?;
        let stored = StoredPasskey {
            credential_id: b64(&cred.credential_id),
            public_key: b64(&cred.public_key),
            sign_count: cred.sign_count,
            added_at: now(),
            last_used_at: None,
            // Whoever adds a passkey writes this: no line breaks or other control
            // characters go into the notice that quotes it.
            user_agent: user_agent
                .map(|ua| {
                    ua.chars()
                        .filter(|c| !c.is_control())
                        .take(MAX_USER_AGENT_CHARS)
                        .collect::<String>()
                        .trim()
                        .to_string()
                })
                .filter(|ua| !ua.is_empty()),
        };
        self.store()
            .add_passkey(person, &stored)
            .await
            .map_err(|e| match e {
                crate::storage::StoreError::Conflict(_) => {
                    ServiceError::Conflict("this passkey is already added".into())
                }
                e => e.into(),
            })?;
        tracing::info!(
            inbox = %viewer.inbox.name, person = %person.name, passkey = %stored.credential_id,
            "a passkey was added"
        );
        self.announce_passkey(viewer, &stored).await;
        Ok(stored)
    }

    /// The options for `navigator.credentials.get` on the page of an approval that needs a
    /// passkey: a challenge bound to this decision, and the answering person's passkeys.
    pub async fn step_up_options(
        &self,
        d: &Decision,
        person: &Person,
    ) -> Result<Value, ServiceError> {
        let rp = self.relying_party()?;
        let passkeys = self.store().passkeys(person.id).await?;
        if passkeys.is_empty() {
            return Err(no_passkey());
        }
        let challenge = self.new_challenge(Ceremony::StepUp, d.id).await?;
        Ok(get_options(&rp, &challenge, &passkeys))
    }

    /// An Allow of an approval whose rule wants a passkey counts only with a valid assertion
    /// of one of the answering person's own passkeys, made for this decision: the assertion
    /// is checked, its challenge spent and the passkey's counter moved, and the passkey used
    /// goes into the audit trail. Every Allow is checked, a vote towards a rule of several
    /// people as much as the one that resolves it. Deny, and approvals without a step-up,
    /// need nothing.
    pub(super) async fn check_step_up(
        &self,
        d: &Decision,
        resolution: &mut Resolution,
        passkey: Option<&AssertionInput>,
        person: Option<&Person>,
    ) -> Result<(), ServiceError> {
        if !d.spec.needs_step_up() || !allows(resolution.outcome.as_ref()) {
            return Ok(());
        }
        let (Some(input), Some(person)) = (passkey, person) else {
            return Err(ServiceError::invalid(
                "passkey",
                "this approval's Allow needs your passkey: open it on your phone and tap Allow \
                 there (Deny needs none)",
            ));
        };
        let passkeys = self.store().passkeys(person.id).await?;
        if passkeys.is_empty() {
            return Err(no_passkey());
        }
        let id = self
            .check_assertion(&passkeys, input, Ceremony::StepUp, d.id)
            .await?;
        if let Value::Object(detail) = &mut resolution.detail {
            detail.insert("step_up".into(), json!({"passkey": id}));
        }
        Ok(())
    }

    /// The passkeys of a person of the named inbox, oldest first (`sayso person passkeys`).
    pub async fn person_passkeys(
        &self,
        inbox_name: &str,
        name: &str,
    ) -> Result<Vec<StoredPasskey>, ServiceError> {
        let (_, person) = self.person_named(inbox_name, name).await?;
        Ok(self.store().passkeys(person.id).await?)
    }

    /// Removes the passkey of a person of the named inbox whose id starts with `id_prefix`
    /// (as `person_passkeys` lists it), and returns it. A prefix that is no passkey of
    /// theirs, or more than one, is refused saying so.
    pub async fn remove_person_passkey(
        &self,
        inbox_name: &str,
        name: &str,
        id_prefix: &str,
    ) -> Result<StoredPasskey, ServiceError> {
        let (_, person) = self.person_named(inbox_name, name).await?;
        let prefix = id_prefix.trim();
        if prefix.is_empty() {
            return Err(ServiceError::invalid(
                "id",
                "name the passkey to remove by its id, or the start of it, as listed",
            ));
        }
        let passkeys = self.store().passkeys(person.id).await?;
        let matching: Vec<&StoredPasskey> = passkeys
            .iter()
            .filter(|p| p.credential_id.starts_with(prefix))
            .collect();
        let found = match matching.as_slice() {
            [one] => (*one).clone(),
            [] => {
                return Err(ServiceError::invalid(
                    "id",
                    format!("{name:?} has no passkey whose id starts with {prefix:?}"),
                ));
            }
            several => {
                return Err(ServiceError::invalid(
                    "id",
                    format!(
                        "{} passkeys of {name:?} start with {prefix:?}: give more of the id",
                        several.len()
                    ),
                ));
            }
        };
        if !self
            .store()
            .remove_passkey(person.id, &found.credential_id)
            .await?
        {
            return Err(ServiceError::Conflict(
                "the passkey was removed meanwhile".into(),
            ));
        }
        tracing::info!(
            inbox = %inbox_name, person = %name, passkey = %found.credential_id,
            "a passkey was removed"
        );
        Ok(found)
    }

    /// Checks an assertion made with one of `passkeys` for `ceremony` on `subject`, spends
    /// its challenge and moves the passkey's counter; returns the passkey's id.
    async fn check_assertion(
        &self,
        passkeys: &[StoredPasskey],
        input: &AssertionInput,
        ceremony: Ceremony,
        subject: Uuid,
    ) -> Result<String, ServiceError> {
        let assertion = Assertion::decode(input).map_err(refused)?;
        let id = b64(&assertion.credential_id);
        let stored = passkeys
            .iter()
            .find(|p| p.credential_id == id)
            .ok_or_else(|| ServiceError::invalid("passkey", "this passkey is not one of yours"))?;
        let public_key = unb64(&stored.public_key, "the stored key")
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        let rp = self.relying_party()?;
        let key = self.challenge_key().await?;
        let expected = expected(&rp, &key, ceremony, subject);
        let verified = verify_assertion(&assertion, &public_key, stored.sign_count, &expected)
            .map_err(refused)?;
        self.spend(&verified.challenge).await?;
        if !self
            .store()
            .use_passkey(&id, stored.sign_count, verified.sign_count, now())
            .await?
        {
            return Err(refused(WebauthnError::CounterWentBack {
                got: verified.sign_count,
                stored: stored.sign_count,
            }));
        }
        Ok(id)
    }
}

/// What a ceremony's answer is checked against, now.
fn expected<'a>(
    rp: &'a RelyingParty,
    key: &'a str,
    ceremony: Ceremony,
    subject: Uuid,
) -> Expected<'a> {
    Expected {
        origin: &rp.origin,
        rp_id: &rp.rp_id,
        ceremony,
        subject,
        key: key.as_bytes(),
        now: now().unix_timestamp(),
    }
}

/// The options of a `navigator.credentials.get` with `challenge` and any of `passkeys`.
fn get_options(rp: &RelyingParty, challenge: &[u8], passkeys: &[StoredPasskey]) -> Value {
    json!({
        "challenge": b64(challenge),
        "rpId": rp.rp_id,
        "timeout": CEREMONY_TIMEOUT_MS,
        "userVerification": "required",
        "allowCredentials": credential_list(passkeys),
    })
}

fn credential_list(passkeys: &[StoredPasskey]) -> Vec<Value> {
    passkeys
        .iter()
        .map(|p| json!({"type": "public-key", "id": p.credential_id}))
        .collect()
}

/// A passkey problem, said to the person at `passkey`.
fn refused(e: WebauthnError) -> ServiceError {
    ServiceError::invalid("passkey", format!("the passkey was not accepted: {e}"))
}

fn no_passkey() -> ServiceError {
    ServiceError::invalid(
        "passkey",
        "this approval's Allow needs a passkey, and you have none yet: add one from your feed \
         on this device (\"Add a passkey on this device\")",
    )
}
