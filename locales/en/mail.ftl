# Mails: an ask, a reminder, a decision closed.

mail-footer = Sent by sayso for a question an agent asked you. Opening the link decides nothing; you answer on the page it opens.
mail-footer-closed = Sent by sayso: this question is closed.
mail-open-to-answer = Open to answer
mail-or-open = Or open
mail-expires = Expires { $in } ({ $at }).
mail-confirm-note = Each opens the page to confirm; nothing is decided by opening a link.
mail-confirm-link = { $answer } (opens the page to confirm):
mail-reminder-title = Reminder: { $question }
mail-still-waiting = Still waiting for your answer, and it expires { $in } ({ $at }):
mail-see-question = See the question
mail-reminder-subject-more = Reminder: { $question } (and { $count } more waiting)
mail-wanted-bool = { $yes } or { $no }?
mail-wanted-any = Pick any of:
mail-wanted-one = Pick one of:
mail-wanted-text = A written answer
mail-wanted-form =
    { $count ->
        [one] One question:
       *[other] { $count } questions:
    }
mail-wanted-todo = A to-do: mark it done or skip it
mail-allow-on-the-page = Allow on the page: it shows all that runs.
