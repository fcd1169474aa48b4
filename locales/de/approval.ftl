# Die Freigabeseite eines Werkzeugaufrufs und was der Aufruf ausführt.

approval-agent-says = Der Agent sagt:
approval-step-up = Erlauben braucht deinen Passkey.
approval-dangers = Genauer hinsehen
approval-what-runs = Was ausgeführt wird
approval-cut = Nicht alles wird gezeigt { $note }.
approval-cut-allow-later = Erlauben gibt es, sobald du alles gesehen hast.
approval-show-all = Alles zeigen
approval-tool = Werkzeug
approval-mcp-server = MCP-Server
approval-in = In
approval-session = Sitzung
approval-asked-by = Gefragt wegen
approval-ran-edit = Vor dem Erlauben von der Person geändert: Der Agent führt diesen Befehl aus, nicht seinen eigenen
approval-removed = entfernt
approval-added = hinzugefügt
approval-reason-shown = Grund: { $reason }
approval-at = Um
approval-elsewhere = Du beantwortest das in deinem sayso-Feed oder über seine Benachrichtigung: Dieser Link zeigt es nur an.
approval-confirm = Aus der Benachrichtigung bestätigen:
approval-confirm-nothing-yet = Entschieden ist erst, wenn du auf den Knopf tippst.
approval-all-choices = Alle Möglichkeiten
approval-see-all-to-allow = Alles ansehen, um zu erlauben
approval-edit = Befehl vor dem Erlauben ändern
approval-command = Befehl
approval-command-hint = (Erlauben führt ihn so aus, wie er hier steht)
approval-your-edit = Deine Änderung, verglichen mit der Anfrage des Agenten
approval-edit-hint = Erlauben führt deinen Befehl aus, nicht den des Agenten. Eine Regel kann ihn trotzdem ablehnen oder erneut nachfragen.
approval-allow-for-a-while = Eine Zeit lang erlauben
approval-reason = Grund
approval-reason-hint = (optional; der Agent liest ihn)
runs-edit = Ändern
runs-adds =
    Fügt { $count ->
        [one] 1 Zeile
       *[other] { $count } Zeilen
    } hinzu
runs-removes =
    Entfernt { $count ->
        [one] 1 Zeile
       *[other] { $count } Zeilen
    }
runs-patch = Patch
runs-write = Schreiben
runs-fetch = Abrufen von
runs-input-to = Eingabe an
runs-input-none = : keine
runs-also-in-input = Außerdem in der Eingabe
approval-allow = Erlauben
approval-deny = Ablehnen
timed-quarter = Für 15 Min.
timed-hour = Für 1 Stunde
timed-morning = Bis morgen { $clock }
timed-note = Bis dahin laufen { $tool }-Aufrufe, nach denen keine Regel fragt, ohne Rückfrage, in jeder { $agent }-Sitzung. Aufrufe, nach denen andere Regeln fragen oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt. Dein Feed zeigt die Erlaubnis und kann sie widerrufen.
timed-note-project = Bis dahin laufen { $tool }-Aufrufe in { $project }, nach denen keine Regel fragt, ohne Rückfrage, in jeder { $agent }-Sitzung. Aufrufe, nach denen andere Regeln fragen oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt. Dein Feed zeigt die Erlaubnis und kann sie widerrufen.
timed-note-rule = Bis dahin laufen { $tool }-Aufrufe, nach denen dieselbe Regel fragt, ohne Rückfrage, in jeder { $agent }-Sitzung. Aufrufe, nach denen andere Regeln fragen oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt. Dein Feed zeigt die Erlaubnis und kann sie widerrufen.
timed-note-rule-project = Bis dahin laufen { $tool }-Aufrufe in { $project }, nach denen dieselbe Regel fragt, ohne Rückfrage, in jeder { $agent }-Sitzung. Aufrufe, nach denen andere Regeln fragen oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt. Dein Feed zeigt die Erlaubnis und kann sie widerrufen.
approval-agent-waits = Der Agent wartet { $for } auf deine Antwort, bis { $clock }
approval-open-for = Offen { $for }, bis { $clock }
approval-stopped-waiting = Der Agent hat um { $clock } aufgehört zu warten; eine Antwort wird jetzt noch festgehalten, aber er hat ohne sie weitergemacht.
session-allow-tool = Alle { $tool }-Aufrufe in dieser Sitzung erlauben
session-note = Bis diese { $agent }-Sitzung endet, laufen sie ohne Rückfrage. Aufrufe, nach denen eine eigene Regel fragt oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt.
session-note-rule = Bis diese { $agent }-Sitzung endet, laufen die, nach denen dieselbe Regel fragt, ohne Rückfrage. Aufrufe, nach denen andere Regeln fragen, werden weiter gefragt.
outcome-allowed-session = { $tool } für diese Sitzung erlaubt
outcome-expired = Niemand hat rechtzeitig geantwortet
outcome-stopped-waiting = { $agent } hat um { $clock } aufgehört zu warten
outcome-withdrew = Er hat die Frage zurückgezogen; eine Antwort führt jetzt nichts mehr aus und ändert nichts.
outcome-late = Diese Antwort kam, nachdem der Agent um { $time } aufgehört hatte zu warten: Sie ist festgehalten, aber der Agent hatte schon ohne sie weitergemacht.
runs-more-fields =
    { $count ->
        [one] … und 1 weiteres Feld: Die Seite zeigt es
       *[other] … und { $count } weitere Felder: Die Seite zeigt sie
    }
runs-title-bash = { $who } möchte einen Bash-Befehl ausführen
runs-title-powershell = { $who } möchte einen PowerShell-Befehl ausführen
runs-title-shell = { $who } möchte mit { $tool } einen Shell-Befehl ausführen
runs-title-write = { $who } möchte mit { $tool } eine Datei schreiben
runs-title-edit = { $who } möchte mit { $tool } eine Datei ändern
runs-title-patch = { $who } möchte mit { $tool } einen Patch anwenden
runs-title-fetch = { $who } möchte mit { $tool } eine Webseite abrufen
runs-title-other = { $who } möchte { $tool } verwenden
runs-mcp-tool = { $tool } (MCP-Server { $server })
runs-file = Datei:
runs-open-to-see-all = Öffne die Seite, um alles zu sehen.
runs-also-in-input-colon = Außerdem in der Eingabe:
session-allow-bash = Alle Bash-Befehle in dieser Sitzung erlauben
session-allow-powershell = Alle PowerShell-Befehle in dieser Sitzung erlauben
session-allow-shell = Alle Shell-Befehle in dieser Sitzung erlauben
allowed-quarter = Erlaubt für 15 Min., bis { $clock }
allowed-hour = Erlaubt für 1 Stunde, bis { $clock }
allowed-until = Erlaubt bis { $clock }
allowed-live-note = Bis dahin laufen diese Aufrufe ohne Rückfrage; Aufrufe, nach denen andere Regeln fragen oder die einen Passkey oder mehr Personen brauchen, werden weiter gefragt.
allowed-revoked = Widerrufen
allowed-revoked-note = Sie hätte bis { $clock } gegolten; ab jetzt wird bei diesen Aufrufen wieder gefragt.
allowed-ended = Beendet um { $clock }
allowed-ended-note = Bei diesen Aufrufen wird wieder gefragt.
