// The JSON shapes of sayso's agent API (docs/API.md), field for field as the server sends
// them: snake_case, so a Decision read here reads the same as one in the API docs, a
// webhook body or a log.
/** The statuses a decision ends in; `wait` returns on each of them. */
export const TERMINAL_STATUSES = ["answered", "declined", "expired", "cancelled"];
