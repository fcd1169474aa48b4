# A tool call's approval page and what the call runs.

approval-agent-says = The agent says:
approval-step-up = Allow needs your passkey.
approval-dangers = Worth a second look
approval-what-runs = What runs
approval-cut = Not all of it is shown { $note }.
approval-cut-allow-later = Allow is offered once you have seen all of it.
approval-show-all = Show all of it
approval-tool = Tool
approval-mcp-server = MCP server
approval-in = In
approval-session = Session
approval-asked-by = Asked by
approval-ran-edit = Edited by the person before allowing: the agent runs this command, not its own
approval-removed = removed
approval-added = added
approval-reason-shown = Reason: { $reason }
approval-at = At
approval-elsewhere = You answer this from your sayso feed or from its notification: this link only shows it.
approval-confirm = Confirm from the notification:
approval-confirm-nothing-yet = Nothing is decided until you tap the button.
approval-all-choices = All choices
approval-see-all-to-allow = See all to allow
approval-edit = Edit the command before allowing
approval-command = Command
approval-command-hint = (Allow runs it as written here)
approval-your-edit = Your edit, against what the agent asked
approval-edit-hint = Allow runs your command, not the agent's. A policy rule may still refuse it, or ask for it again.
approval-allow-for-a-while = Allow for a while
approval-reason = Reason
approval-reason-hint = (optional; the agent reads it)
runs-edit = Edit
runs-adds =
    Adds { $count ->
        [one] 1 line
       *[other] { $count } lines
    }
runs-removes =
    Removes { $count ->
        [one] 1 line
       *[other] { $count } lines
    }
runs-patch = Patch
runs-write = Write
runs-fetch = Fetch from
runs-input-to = Input to
runs-input-none = : none
runs-also-in-input = Also in its input
approval-allow = Allow
approval-deny = Deny
timed-quarter = For 15 min
timed-hour = For 1 hour
timed-morning = Until tomorrow { $clock }
timed-note = Until then, { $tool } calls that no policy rule asks about run without asking you, in any { $agent } session. Calls other rules ask about, or that need a passkey or more people, are still asked. Your feed lists it and revokes it.
timed-note-project = Until then, { $tool } calls that no policy rule asks about in { $project } run without asking you, in any { $agent } session. Calls other rules ask about, or that need a passkey or more people, are still asked. Your feed lists it and revokes it.
timed-note-rule = Until then, { $tool } calls that the same policy rule asks about run without asking you, in any { $agent } session. Calls other rules ask about, or that need a passkey or more people, are still asked. Your feed lists it and revokes it.
timed-note-rule-project = Until then, { $tool } calls that the same policy rule asks about in { $project } run without asking you, in any { $agent } session. Calls other rules ask about, or that need a passkey or more people, are still asked. Your feed lists it and revokes it.
approval-agent-waits = The agent waits for your answer { $for }, until { $clock }
approval-open-for = Open { $for }, until { $clock }
approval-stopped-waiting = The agent stopped waiting at { $clock }; an answer now is recorded, but it went on without it.
session-allow-tool = Allow all { $tool } calls in this session
session-note = Until this { $agent } session ends, they run without asking you. Calls that a policy rule of their own asks about, or that need a passkey or more people, are still asked.
session-note-rule = Until this { $agent } session ends, those the same policy rule asks about run without asking you. Calls other rules ask about are still asked.
outcome-allowed-session = Allowed { $tool } for this session
outcome-expired = Nobody answered in time
outcome-stopped-waiting = { $agent } stopped waiting at { $clock }
outcome-withdrew = It withdrew the question, so an answer now runs nothing and changes nothing.
outcome-late = This answer came after the agent stopped waiting at { $time }: it is recorded, but the agent had already gone on without it.
runs-more-fields =
    { $count ->
        [one] … and 1 more field: the page shows it
       *[other] … and { $count } more fields: the page shows them
    }
runs-title-bash = { $who } wants to run a Bash command
runs-title-powershell = { $who } wants to run a PowerShell command
runs-title-shell = { $who } wants to run a shell command with { $tool }
runs-title-write = { $who } wants to write a file with { $tool }
runs-title-edit = { $who } wants to edit a file with { $tool }
runs-title-patch = { $who } wants to apply a patch with { $tool }
runs-title-fetch = { $who } wants to fetch a web page with { $tool }
runs-title-other = { $who } wants to use { $tool }
runs-mcp-tool = { $tool } (MCP server { $server })
runs-file = File:
runs-open-to-see-all = Open the page to see it all.
runs-also-in-input-colon = Also in its input:
session-allow-bash = Allow all Bash commands in this session
session-allow-powershell = Allow all PowerShell commands in this session
session-allow-shell = Allow all shell commands in this session
allowed-quarter = Allowed for 15 min, until { $clock }
allowed-hour = Allowed for 1 hour, until { $clock }
allowed-until = Allowed until { $clock }
allowed-live-note = Until then these calls run without asking you; calls other rules ask about, or that need a passkey or more people, are still asked.
allowed-revoked = Revoked
allowed-revoked-note = It would have stood until { $clock }; from now on these calls are asked again.
allowed-ended = Ended at { $clock }
allowed-ended-note = These calls are asked again.
