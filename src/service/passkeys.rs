//! Passkeys: added by the person from a device bound to their inbox (the feed page, never an
//! API key), and asked for when a tool approval's policy rule wants a step-up: its Allow then
//! counts only with an assertion of one of the inbox's passkeys, made for that decision.
//!
//! The relying party is the public URL: its host is the rpId, its origin the only origin
//! accepted. Challenges are stateless (domain::webauthn) and spent in the store once
//! answered, so none counts twice, on any replica.

use rand::TryRngCore;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Service, ServiceError, Tokens, now};
use crate::domain::approval::allows;
use crate::domain::inbox::Inbox;
use crate::domain::webauthn::{
    Assertion, AssertionInput, Ceremony, ES256, Expected, StoredPasskey, WebauthnError, b64,
    issue_challenge, spent_record_expiry, unb64, verify_assertion, verify_registration,
};
use crate::domain::{Decision, Resolution};

/// The setting holding the key passkey challenges are made with.
const CHALLENGE_KEY_SETTING: &str = "passkey_challenge_key";
/// How long the browser gives the person to use their passkey, in milliseconds.
const CEREMONY_TIMEOUT_MS: u64 = 120_000;
/// The most passkeys one inbox keeps: enough for every device of a person.
const MAX_PASSKEYS: usize = 20;

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
    ) -> Result<String, ServiceError> {
        let key = self.challenge_key().await?;
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng
            .try_fill_bytes(&mut nonce)
            .map_err(|e| ServiceError::Internal(format!("no random source: {e}")))?;
        let now = now().unix_timestamp();
        Ok(b64(&issue_challenge(
            key.as_bytes(),
            ceremony,
            subject,
            now,
            nonce,
        )))
    }

    /// Records a challenge as answered; a second answer to it is refused.
    async fn spend(&self, challenge: &[u8]) -> Result<(), ServiceError> {
        let hash = super::tokens::sha256_hex(challenge);
        let expires = OffsetDateTime::from_unix_timestamp(spent_record_expiry(challenge))
            .unwrap_or_else(|_| now());
        if !self.store().spend_challenge(&hash, expires, now()).await? {
            return Err(refused(WebauthnError::ReusedChallenge));
        }
        Ok(())
    }

    /// The options for `navigator.credentials.create` on the bound device's feed.
    pub async fn passkey_creation_options(&self, inbox: &Inbox) -> Result<Value, ServiceError> {
        let rp = self.relying_party()?;
        let existing = self.store().passkeys(inbox.id).await?;
        Ok(json!({
            "challenge": self.new_challenge(Ceremony::Register, inbox.id).await?,
            "rp": {"id": rp.rp_id, "name": "sayso"},
            "user": {
                "id": b64(inbox.id.as_bytes()),
                "name": inbox.name,
                "displayName": format!("sayso · {}", inbox.name),
            },
            "pubKeyCredParams": [{"type": "public-key", "alg": ES256}],
            "timeout": CEREMONY_TIMEOUT_MS,
            "attestation": "none",
            "authenticatorSelection": {"residentKey": "preferred", "userVerification": "required"},
            "excludeCredentials": existing.iter()
                .map(|p| json!({"type": "public-key", "id": p.credential_id}))
                .collect::<Vec<_>>(),
        }))
    }

    /// Adds the passkey a bound device made (`{"client_data_json", "attestation_object"}`,
    /// base64url) to its inbox. Every problem is a validation error at `passkey`.
    pub async fn register_passkey(
        &self,
        inbox: &Inbox,
        body: &Value,
    ) -> Result<StoredPasskey, ServiceError> {
        let field = |name: &'static str| {
            body.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| ServiceError::invalid(name, "is required (base64url)"))
                .and_then(|s| unb64(s, name).map_err(refused))
        };
        let client_data = field("client_data_json")?;
        let attestation = field("attestation_object")?;
        let rp = self.relying_party()?;
        let key = self.challenge_key().await?;
        let expected = Expected {
            origin: &rp.origin,
            rp_id: &rp.rp_id,
            ceremony: Ceremony::Register,
            subject: inbox.id,
            key: key.as_bytes(),
            now: now().unix_timestamp(),
        };
        let cred = verify_registration(&client_data, &attestation, &expected).map_err(refused)?;
        if self.store().passkeys(inbox.id).await?.len() >= MAX_PASSKEYS {
            return Err(ServiceError::invalid(
                "passkey",
                format!("this inbox already has {MAX_PASSKEYS} passkeys, the most it keeps"),
            ));
        }
        self.spend(&cred.challenge).await?;
        let stored = StoredPasskey {
            credential_id: b64(&cred.credential_id),
            public_key: b64(&cred.public_key),
            sign_count: cred.sign_count,
        };
        self.store()
            .add_passkey(inbox.id, &stored, now())
            .await
            .map_err(|e| match e {
                crate::storage::StoreError::Conflict(_) => {
                    ServiceError::Conflict("this passkey is already added to an inbox".into())
                }
                e => e.into(),
            })?;
        tracing::info!(inbox = %inbox.name, "a passkey was added");
        Ok(stored)
    }

    /// The options for `navigator.credentials.get` on the page of an approval that needs a
    /// passkey: a challenge bound to this decision, and the inbox's passkeys.
    pub async fn step_up_options(&self, d: &Decision) -> Result<Value, ServiceError> {
        let rp = self.relying_party()?;
        let passkeys = self.store().passkeys(d.inbox_id).await?;
        if passkeys.is_empty() {
            return Err(no_passkey());
        }
        Ok(json!({
            "challenge": self.new_challenge(Ceremony::StepUp, d.id).await?,
            "rpId": rp.rp_id,
            "timeout": CEREMONY_TIMEOUT_MS,
            "userVerification": "required",
            "allowCredentials": passkeys.iter()
                .map(|p| json!({"type": "public-key", "id": p.credential_id}))
                .collect::<Vec<_>>(),
        }))
    }

    /// An Allow of an approval whose rule wants a passkey counts only with a valid assertion
    /// of one of the inbox's passkeys, made for this decision: the assertion is checked, its
    /// challenge spent and the passkey's counter moved, and the passkey used goes into the
    /// audit trail. Deny, and approvals without a step-up, need nothing.
    pub(super) async fn check_step_up(
        &self,
        d: &Decision,
        resolution: &mut Resolution,
        passkey: Option<&AssertionInput>,
    ) -> Result<(), ServiceError> {
        let needs = d.spec.approval.as_ref().and_then(|a| a.step_up).is_some();
        if !needs || !allows(resolution.outcome.as_ref()) {
            return Ok(());
        }
        let Some(input) = passkey else {
            return Err(ServiceError::invalid(
                "passkey",
                "this approval's Allow needs your passkey: open it on your phone and tap Allow \
                 there (Deny needs none)",
            ));
        };
        let assertion = Assertion::decode(input).map_err(refused)?;
        let id = b64(&assertion.credential_id);
        let stored = self
            .store()
            .passkeys(d.inbox_id)
            .await?
            .into_iter()
            .find(|p| p.credential_id == id)
            .ok_or_else(|| {
                ServiceError::invalid("passkey", "this passkey is not one of this inbox's")
            })?;
        let public_key = unb64(&stored.public_key, "the stored key")
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        let rp = self.relying_party()?;
        let key = self.challenge_key().await?;
        let expected = Expected {
            origin: &rp.origin,
            rp_id: &rp.rp_id,
            ceremony: Ceremony::StepUp,
            subject: d.id,
            key: key.as_bytes(),
            now: now().unix_timestamp(),
        };
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
        if let Value::Object(detail) = &mut resolution.detail {
            detail.insert("step_up".into(), json!({"passkey": id}));
        }
        Ok(())
    }
}

/// A passkey problem, said to the person at `passkey`.
fn refused(e: WebauthnError) -> ServiceError {
    ServiceError::invalid("passkey", format!("the passkey was not accepted: {e}"))
}

fn no_passkey() -> ServiceError {
    ServiceError::invalid(
        "passkey",
        "this approval's Allow needs a passkey, and this inbox has none yet: add one from your \
         feed on this device (\"Add a passkey on this device\")",
    )
}
