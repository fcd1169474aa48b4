# Der Feed: was wartet, was eine Zeit lang erlaubt ist, Aufgaben, was entschieden wurde.

feed-whose-person = { $person } · Postfach { $inbox }
feed-whose-inbox = Postfach · { $inbox }
feed-more-on-next = Mehr wartet auf der nächsten Seite ↓
feed-push-subscribe = Auf diesem Gerät benachrichtigen
feed-passkey-add = Passkey auf diesem Gerät hinzufügen
feed-projects = Projekte
feed-all-projects = Alle
feed-decisions = Entscheidungen
feed-no-decision = Keine Entscheidung wartet.
feed-expires = läuft { $in } ab
feed-allowed-for-a-while = Eine Zeit lang erlaubt
feed-revoke = Widerrufen
feed-todos = Aufgaben
feed-no-todo = Keine offene Aufgabe.
feed-paging = Seiten dessen, was wartet
feed-next-page = Nächste Seite: läuft später ab →
feed-last-page = Das ist alles, was wartet.
feed-first-page = ← Erste Seite: läuft zuerst ab
feed-recent = Zuletzt
feed-nothing-resolved = Noch nichts entschieden.
feed-edited = Vor dem Erlauben von der Person geändert; der Agent wollte
feed-this-device = Dieses Gerät
kind-approval = Freigabe
kind-bool = Ja oder Nein
kind-choose = Auswahl
kind-text = Text
kind-form = Formular
kind-todo = Aufgabe
feed-nothing-waiting = Nichts wartet
feed-waiting =
    { $count ->
        [one] 1 wartet auf dich
       *[other] { $count } warten auf dich
    }
feed-waiting-more-than = Mehr als { $count } warten auf dich
feed-waiting-or-more = { $count } oder mehr warten auf dich
feed-waiting-unknown = Wartet auf dich
feed-paging-first = Hier stehen die { $count }, die zuerst ablaufen.
feed-paging-later = Hier stehen { $count }, nach denen, die früher ablaufen.
feed-session-link = Alle Aufrufe von { $agent }, Sitzung { $session }, auf einer Seite beantworten
feed-session-link-count = Alle { $count } Aufrufe von { $agent }, Sitzung { $session }, auf einer Seite beantworten
allowed-rule = Regel:
allowed-by = Erlaubt von { $person }
allowed-session = Sitzung { $session }
allowed-more-uses = und { $count } weitere:
nopush-heading = Keine Benachrichtigungen oder Passkeys auf dieser Seite:
nopush-why = Sie läuft über einfaches http, und Browser bieten beides nur über https an.
nopush-instead = Was dein Telefon stattdessen klingeln lässt:
nopush-telegram = Ein Telegram-Bot
nopush-telegram-time = : etwa 5 Minuten, ohne https
nopush-ntfy = Die ntfy-App
nopush-ntfy-time = : etwa 3 Minuten
nopush-https-time = über einen Tunnel oder Caddy: etwa 15 Minuten, danach bietet diese Seite beides an
allowance-sentence = { $what }, { $place }, { $agent }.
allowance-every-call = jeder { $tool }-Aufruf, nach dem keine Regel fragt
allowance-rule-calls = { $tool }-Aufrufe, nach denen diese Regel fragt
allowance-in-project = im Projektordner { $project }
allowance-no-project = außerhalb jedes Projektordners
allowance-any-session = in jeder { $agent }-Sitzung
allowance-headline = { $tool } erlaubt bis { $clock }
allowance-no-use = noch kein Aufruf lief ohne dich
allowance-uses =
    { $count ->
        [one] 1 Aufruf lief ohne dich
       *[other] { $count } Aufrufe liefen ohne dich
    }
