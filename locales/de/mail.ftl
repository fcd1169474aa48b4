# Mails: eine Frage, eine Erinnerung, eine geschlossene Entscheidung.

mail-footer = Von sayso gesendet, zu einer Frage, die dir ein Agent gestellt hat. Das Öffnen des Links entscheidet nichts; du antwortest auf der Seite, die er öffnet.
mail-footer-closed = Von sayso gesendet: Diese Frage ist geschlossen.
mail-open-to-answer = Zum Antworten öffnen
mail-or-open = Oder öffne
mail-expires = Läuft { $in } ab ({ $at }).
mail-confirm-note = Jeder öffnet die Seite zum Bestätigen; das Öffnen eines Links entscheidet nichts.
mail-confirm-link = { $answer } (öffnet die Seite zum Bestätigen):
mail-reminder-title = Erinnerung: { $question }
mail-still-waiting = Wartet noch auf deine Antwort und läuft { $in } ab ({ $at }):
mail-see-question = Frage ansehen
mail-reminder-subject-more = Erinnerung: { $question } (und { $count } weitere warten)
mail-wanted-bool = { $yes } oder { $no }?
mail-wanted-any = Wähle beliebig viele aus:
mail-wanted-one = Wähle eines aus:
mail-wanted-text = Eine geschriebene Antwort
mail-wanted-form =
    { $count ->
        [one] Eine Frage:
       *[other] { $count } Fragen:
    }
mail-wanted-todo = Eine Aufgabe: als erledigt markieren oder überspringen
mail-allow-on-the-page = Erlauben auf der Seite: Sie zeigt alles, was ausgeführt wird.
