// sayso: ask a person from code, wait for the answer, verify the webhooks (docs/API.md).
export { Sayso } from "./client.js";
export { SaysoError, SaysoTimeoutError, WebhookVerificationError } from "./errors.js";
export { verifyWebhook, DEFAULT_TOLERANCE_S } from "./webhook.js";
export { TERMINAL_STATUSES } from "./types.js";
