# Die Seite mehrerer Aufrufe einer Agentensitzung.

session-title = { $count } von { $agent }
session-nothing-waiting = Nichts wartet aus dieser Sitzung
session-waiting =
    { $count ->
        [one] 1 Aufruf von { $agent } wartet
       *[other] { $count } Aufrufe von { $agent } warten
    }
session-each-in-full = Jeder Aufruf wird ganz gezeigt; beantworte jeden einzeln oder alle am Ende.
session-call-number = Aufruf { $number } von { $count }
session-allow-elsewhere = Dieser Aufruf { $why }.
session-open-to-allow = Zum Erlauben öffnen
session-all-of-them = Alle zusammen
session-all-calls = Alle { $count } Aufrufe
session-no-allow-all = Kein „Alle erlauben“ hier:
session-deny-all-answers = „Alle ablehnen“ beantwortet trotzdem jeden.
session-deny-all = Alle { $count } ablehnen
session-allow-all = Alle { $count } erlauben
session-call-elsewhere = Aufruf { $number } { $why }.
session-waits = Wartet { $for }, bis { $clock }
session-why-passkey = braucht deinen Passkey: erlaube ihn auf seiner eigenen Seite
session-why-people = braucht das Erlauben von mehr als einer Person: beantworte ihn auf seiner eigenen Seite
session-why-long = ist zu lang, um ihn hier zu zeigen: öffne ihn ganz auf seiner eigenen Seite, um ihn zu erlauben
session-refused-value = Wähle „Alle erlauben“ oder „Alle ablehnen“.
session-refused-none = Es wurde kein Aufruf gesendet: antworte auf der Seite selbst.
session-refused-not-ours = Nichts wurde beantwortet: ein gesendeter Aufruf gehört nicht zu den Aufrufen dieser Sitzung, die auf dich warten.
session-refused-allow = Nichts wurde beantwortet: „Alle erlauben“ gibt es nicht, wo ein Aufruf { $why }.
