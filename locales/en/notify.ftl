# Web Push and ntfy notifications.

notify-gathered =
    { $count ->
        [one] 1 more from this session is waiting.
       *[other] { $count } more from this session are waiting.
    }
notify-waiting =
    { $count ->
        [one] 1 more question is waiting in your sayso feed.
       *[other] { $count } more questions are waiting in your sayso feed.
    }
notify-reminder-title = Reminder · { $title }
notify-expires = Expires { $in }, at { $clock }
