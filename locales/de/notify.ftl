# Web-Push- und ntfy-Benachrichtigungen.

notify-gathered =
    { $count ->
        [one] 1 weiterer aus dieser Sitzung wartet.
       *[other] { $count } weitere aus dieser Sitzung warten.
    }
notify-waiting =
    { $count ->
        [one] 1 weitere Frage wartet in deinem sayso-Feed.
       *[other] { $count } weitere Fragen warten in deinem sayso-Feed.
    }
notify-reminder-title = Erinnerung · { $title }
notify-expires = Läuft { $in } ab, um { $clock }
