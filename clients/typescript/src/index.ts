// sayso: ask a person from code, wait for the answer, verify the webhooks (docs/API.md).

export { Sayso } from "./client.js";
export type { SaysoOptions, RequestOptions, AskOptions, ListOptions, DecisionRef } from "./client.js";
export { SaysoError, SaysoTimeoutError, WebhookVerificationError } from "./errors.js";
export type { ErrorDetail } from "./errors.js";
export type { WaitOptions } from "./wait.js";
export type { EventsOptions } from "./events.js";
export type { FetchLike } from "./http.js";
export { verifyWebhook, DEFAULT_TOLERANCE_S } from "./webhook.js";
export type { VerifyOptions, HeadersLike } from "./webhook.js";
export { TERMINAL_STATUSES } from "./types.js";
export type {
  AskFields,
  AskHandle,
  AnsweredBy,
  AnswerRecord,
  AuditEvent,
  Decision,
  DecisionPage,
  Kind,
  NotificationState,
  ResolvedEvent,
  Status,
} from "./types.js";
