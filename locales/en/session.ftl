# The page of several calls of one agent session.

session-title = { $count } from { $agent }
session-nothing-waiting = Nothing waiting from this session
session-waiting =
    { $count ->
        [one] 1 call from { $agent } is waiting
       *[other] { $count } calls from { $agent } are waiting
    }
session-each-in-full = Each call is shown in full; answer each one, or all of them at the end.
session-call-number = Call { $number } of { $count }
session-allow-elsewhere = This call { $why }.
session-open-to-allow = Open to allow
session-all-of-them = All of them
session-all-calls = All { $count } calls
session-no-allow-all = No "Allow all" here:
session-deny-all-answers = Deny all still answers every one.
session-deny-all = Deny all { $count }
session-allow-all = Allow all { $count }
session-call-elsewhere = Call { $number } { $why }.
session-waits = Waits { $for }, until { $clock }
session-why-passkey = needs your passkey: allow it on its own page
session-why-people = needs more than one person's Allow: answer it on its own page
session-why-long = is too long to show here: open all of it on its own page to allow it
session-refused-value = Choose "Allow all" or "Deny all".
session-refused-none = No call was sent: answer from the page itself.
session-refused-not-ours = Nothing was answered: a call sent is not one of this session's calls waiting for you.
session-refused-allow = Nothing was answered: "Allow all" is not given where a call { $why }.
