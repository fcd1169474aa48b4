# Times in words, and a decision's state in one word: pages, mails and chats share them.

time-in-under-a-minute = in less than a minute
time-in-minutes = in { $n } min
time-in-hours = in { $h } h
time-in-hours-minutes = in { $h } h { $m } min
time-in-days =
    { $n ->
        [one] in 1 day
       *[other] in { $n } days
    }
time-for-under-a-minute = for less than a minute more
time-for-minutes =
    { $n ->
        [one] for 1 more minute
       *[other] for { $n } more minutes
    }
time-for-hours =
    { $n ->
        [one] for 1 more hour
       *[other] for { $n } more hours
    }
time-for-hours-minutes = for { $h } h { $m } min more
time-for-days =
    { $n ->
        [one] for 1 more day
       *[other] for { $n } more days
    }

status-waiting = Waiting
status-expired = Expired
status-done = Done
status-skipped = Skipped
status-answered = Answered
status-declined = Declined
status-cancelled = Cancelled
