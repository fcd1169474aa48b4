# The feed: what waits, what was allowed for a while, to-dos, what was decided.

feed-whose-person = { $person } · inbox { $inbox }
feed-whose-inbox = Inbox · { $inbox }
feed-more-on-next = More waiting on the next page ↓
feed-push-subscribe = Notify me on this device
feed-passkey-add = Add a passkey on this device
feed-projects = Projects
feed-all-projects = All
feed-decisions = Decisions
feed-no-decision = No decision is waiting.
feed-expires = expires { $in }
feed-allowed-for-a-while = Allowed for a while
feed-revoke = Revoke
feed-todos = To-dos
feed-no-todo = No open to-do.
feed-paging = Pages of what waits
feed-next-page = Next page: later expiry →
feed-last-page = That is the last of what waits.
feed-first-page = ← First page: soonest expiry
feed-recent = Recent
feed-nothing-resolved = Nothing resolved yet.
feed-edited = Edited by the person before allowing; the agent asked
feed-this-device = This device
kind-approval = Approval
kind-bool = Yes or no
kind-choose = Choice
kind-text = Text
kind-form = Form
kind-todo = To-do
feed-nothing-waiting = Nothing waiting
feed-waiting = { $count } waiting for you
feed-waiting-more-than = More than { $count } waiting for you
feed-waiting-or-more = { $count } or more waiting for you
feed-waiting-unknown = Waiting for you
feed-paging-first = The { $count } that expire soonest are shown here.
feed-paging-later = { $count } shown here, after those that expire sooner.
feed-session-link = Answer all calls from { $agent }, session { $session }, on one screen
feed-session-link-count = Answer all { $count } calls from { $agent }, session { $session }, on one screen
allowed-rule = Rule:
allowed-by = Allowed by { $person }
allowed-session = session { $session }
allowed-more-uses = and { $count } more:
nopush-heading = No notifications or passkeys on this page:
nopush-why = it is plain http, and browsers offer them only on https.
nopush-instead = What rings your phone instead:
nopush-telegram = A Telegram bot
nopush-telegram-time = : about 5 minutes, no https needed
nopush-ntfy = The ntfy app
nopush-ntfy-time = : about 3 minutes
nopush-https-time = through a tunnel or Caddy: about 15 minutes, then this page offers both
allowance-sentence = { $what }, { $place }, { $agent }.
allowance-every-call = every { $tool } call no policy rule asks about
allowance-rule-calls = { $tool } calls this policy rule asks about
allowance-in-project = in the project folder { $project }
allowance-no-project = outside any project folder
allowance-any-session = in any { $agent } session
allowance-headline = { $tool } allowed until { $clock }
allowance-no-use = no call ran without you yet
allowance-uses =
    { $count ->
        [one] 1 call ran without you
       *[other] { $count } calls ran without you
    }
