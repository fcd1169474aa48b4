# Zeiten in Worten und der Stand einer Entscheidung in einem Wort: Seiten, Mails und Chats
# teilen sie.

time-in-under-a-minute = in weniger als einer Minute
time-in-minutes =
    { $n ->
        [one] in 1 Minute
       *[other] in { $n } Minuten
    }
time-in-hours =
    { $h ->
        [one] in 1 Stunde
       *[other] in { $h } Stunden
    }
time-in-hours-minutes = in { $h } Std. { $m } Min.
time-in-days =
    { $n ->
        [one] in 1 Tag
       *[other] in { $n } Tagen
    }
time-for-under-a-minute = noch weniger als eine Minute
time-for-minutes =
    { $n ->
        [one] noch 1 Minute
       *[other] noch { $n } Minuten
    }
time-for-hours =
    { $n ->
        [one] noch 1 Stunde
       *[other] noch { $n } Stunden
    }
time-for-hours-minutes = noch { $h } Std. { $m } Min.
time-for-days =
    { $n ->
        [one] noch 1 Tag
       *[other] noch { $n } Tage
    }

status-waiting = Wartet
status-expired = Abgelaufen
status-done = Erledigt
status-skipped = Ausgelassen
status-answered = Beantwortet
status-declined = Abgelehnt
status-cancelled = Zurückgezogen
