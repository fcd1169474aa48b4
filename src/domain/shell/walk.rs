//! The walk over bash's syntax tree: every simple command the text runs, wherever it sits
//! (lists, pipelines, groups, subshells, loops, conditionals, functions, coprocesses, and
//! the commands substituted inside words, redirections and here-documents).

use std::io::BufReader;
use std::ops::Range;

use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectTarget,
    IoRedirect, Pipeline,
};
use brush_parser::word::{self, WordPiece};
use brush_parser::{Parser, ParserOptions};

use super::word::read as read_word;
use super::{Arg, Doubt, Parsed, Part};

/// How deep substitutions and `bash -c` strings are followed; deeper is a doubt.
const MAX_DEPTH: usize = 8;

/// Where the text being read sits in the whole command.
#[derive(Clone)]
pub struct Place {
    /// The byte of the whole command the text starts at.
    pub offset: usize,
    /// When the text is not the command's own bytes (a `bash -c` string with escapes), every
    /// word points at this span of the whole command instead.
    pub fixed: Option<Range<usize>>,
    /// The part in one of whose words the text runs.
    pub inside: Option<usize>,
    pub depth: usize,
}

/// Reads the whole command.
pub fn read(command: &str, parsed: &mut Parsed) {
    let place = Place {
        offset: 0,
        fixed: None,
        inside: None,
        depth: 0,
    };
    read_at(command, &place, parsed);
}

/// Why the grammar must not be given `text` at all, if it must not: a control character, a
/// here-document without a tag, parentheses nested too deep. Each is text no screen shows
/// or bash refuses, on which the grammar runs without end or for minutes.
pub fn unreadable(text: &str) -> Option<Doubt> {
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\t' | '\n'))
    {
        return Some(Doubt::ControlCharacter(c));
    }
    if let Some(at) = tagless_here_document(text) {
        let why = format!("the here-document at byte {at} has no tag, or no line ends it");
        return Some(Doubt::Unparsed(why));
    }
    if super::nesting(text) > super::MAX_NESTING {
        return Some(Doubt::TooNested);
    }
    None
}

/// Where a `<<` (or `<<-`) is followed by no tag word (`cat << )`), or by one no later line
/// closes, or where `<` runs on past a here-string's three. Bash refuses the first and runs
/// an unclosed one to the end of the text; the grammar reads all of them without end, its
/// memory growing until the process is killed. Quotes are not looked at: a quoted `<< )`
/// (or an arithmetic `1 << 4`) is only ever a doubt too many.
fn tagless_here_document(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b'<' {
            i += 1;
        }
        match i - start {
            1 | 3 => continue,
            2 => {}
            _ => return Some(start),
        }
        let strip_tabs = bytes.get(i) == Some(&b'-');
        if strip_tabs {
            i += 1;
        }
        while matches!(bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let word = i;
        while i < bytes.len() && !b" \t\n()<>|&;".contains(&bytes[i]) {
            i += 1;
        }
        // The tag as bash compares it: quotes and backslashes removed.
        let tag: String = text[word..i]
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        if tag.is_empty() || !closed(&text[i..], &tag, strip_tabs) {
            return Some(start);
        }
    }
    None
}

/// Whether a line after the one the here-document starts on is its tag alone (after tabs,
/// for `<<-`). Bash runs an unclosed one to the end of the text; the grammar loops on some.
fn closed(rest: &str, tag: &str, strip_tabs: bool) -> bool {
    rest.split('\n').skip(1).any(|line| {
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        line == tag
    })
}

/// Whether every `(`, `[` and `{` in `text` is closed by its own kind, in order.
fn paired(text: &str) -> bool {
    let mut open = Vec::new();
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => open.push(b),
            b')' | b']' | b'}' => {
                let want = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty()
}

/// Reads `text`, which runs at `place`, adding its parts (and doubts) to `parsed`.
pub fn read_at(text: &str, place: &Place, parsed: &mut Parsed) {
    if place.depth > MAX_DEPTH {
        parsed.doubts.push(Doubt::TooLong);
        return;
    }
    if let Some(doubt) = unreadable(text) {
        parsed.doubts.push(doubt);
        return;
    }
    let options = ParserOptions::default();
    let mut parser = Parser::new(BufReader::new(text.as_bytes()), &options);
    // brush-parser 0.4 panics on some text (a redirection whose descriptor does not fit an
    // i32, `77777777777>x`; some unclosed expansions in its tokenizer): a grammar that fails
    // is text it cannot read, never a crashed hook.
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse_program()));
    let program = match attempt {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            let why = e.to_string();
            let why = why.lines().next().unwrap_or("a syntax error").to_string();
            parsed.doubts.push(Doubt::Unparsed(why));
            return;
        }
        Err(_) => {
            let why = "the grammar failed on it".to_string();
            parsed.doubts.push(Doubt::Unparsed(why));
            return;
        }
    };
    let mut walk = Walk {
        text,
        place: place.clone(),
        chars: char_offsets(text),
        options,
        parsed,
    };
    for list in &program.complete_commands {
        walk.list(list);
    }
}

/// Byte offsets of each char, when the text is not all ASCII (the grammar counts chars).
fn char_offsets(text: &str) -> Option<Vec<usize>> {
    if text.is_ascii() {
        return None;
    }
    let mut v: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    v.push(text.len());
    Some(v)
}

struct Walk<'a> {
    text: &'a str,
    place: Place,
    chars: Option<Vec<usize>>,
    options: ParserOptions,
    parsed: &'a mut Parsed,
}

/// A command substituted inside a word: its text, the byte of the whole command it starts at,
/// and, when the word's value is not its own bytes there, the span everything read inside it
/// points at instead (as for a `bash -c` string).
type Sub = (String, usize, Option<Range<usize>>);

/// The parts a command made at its own level: the first (which a pipe feeds) and the last
/// (whose output a pipe takes).
type Made = Option<(usize, usize)>;

impl Walk<'_> {
    fn list(&mut self, list: &CompoundList) {
        for item in &list.0 {
            self.pipeline(&item.0.first);
            for next in &item.0.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
        }
    }

    fn pipeline(&mut self, p: &Pipeline) {
        let mut before: Made = None;
        for cmd in &p.seq {
            let made = self.command(cmd);
            if let (Some((_, last)), Some((first, _))) = (before, made) {
                let pipe = self.pipe_before(first);
                let fed = &mut self.parsed.parts[first];
                fed.piped_from = Some(last);
                fed.pipe = pipe;
                fed.fed = true;
            }
            if made.is_some() {
                before = made;
            }
        }
    }

    /// The `|` just before part `at`'s first word.
    fn pipe_before(&self, at: usize) -> Option<Range<usize>> {
        let part = &self.parsed.parts[at];
        let start = part.wrappers.first().or(part.argv.first())?.span.start;
        let local = start.checked_sub(self.place.offset)?;
        let bar = self.text.get(..local)?.rfind('|')?;
        let bar = self.place.offset + bar;
        Some(match &self.place.fixed {
            Some(span) => span.clone(),
            None => bar..bar + 1,
        })
    }

    fn command(&mut self, cmd: &Command) -> Made {
        match cmd {
            Command::Simple(s) => self.simple(s),
            Command::Compound(c, redirects) => {
                let made = self.compound(c);
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, None);
                    }
                }
                made
            }
            Command::Function(f) => self.compound(&f.body.0),
            Command::ExtendedTest(test, _) => {
                self.doubt_if_substitutes(&test.to_string());
                None
            }
        }
    }

    fn compound(&mut self, c: &CompoundCommand) -> Made {
        let before = self.parsed.parts.len();
        match c {
            CompoundCommand::BraceGroup(g) => self.list(&g.list),
            CompoundCommand::Subshell(s) => self.list(&s.list),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w, None);
                }
                self.list(&f.body.list);
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.doubt_if_substitutes(&e.value);
                }
                self.list(&f.body.list);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value, None);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p, None);
                    }
                    if let Some(l) = &item.cmd {
                        self.list(l);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c);
                    }
                    self.list(&e.body);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
            CompoundCommand::Arithmetic(a) => self.arithmetic(a),
            CompoundCommand::Coprocess(c) => {
                self.command(&c.body);
            }
        }
        let after = self.parsed.parts.len();
        // Its own parts: those not inside another's words.
        let own: Vec<usize> = (before..after)
            .filter(|&i| self.parsed.parts[i].inside == self.place.inside)
            .collect();
        Some((*own.first()?, *own.last()?))
    }

    fn simple(&mut self, s: &ast::SimpleCommand) -> Made {
        let mut part = Part {
            wrappers: Vec::new(),
            argv: Vec::new(),
            assigns: false,
            redirects_files: false,
            fed: false,
            piped_from: None,
            pipe: None,
            inside: self.place.inside,
        };
        let mut inner: Vec<Sub> = Vec::new();
        let mut nested: Vec<&ast::SubshellCommand> = Vec::new();
        let prefix = s.prefix.iter().flat_map(|p| &p.0);
        let suffix = s.suffix.iter().flat_map(|p| &p.0);
        let name = s.word_or_name.clone().map(CommandPrefixOrSuffixItem::Word);
        for (is_prefix, item) in prefix
            .map(|i| (true, i))
            .chain(name.iter().map(|i| (false, i)))
            .chain(suffix.map(|i| (false, i)))
        {
            match item {
                CommandPrefixOrSuffixItem::Word(w) => {
                    let (arg, mut subs) = self.read(w);
                    inner.append(&mut subs);
                    part.argv.push(arg);
                }
                CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                    let (arg, mut subs) = self.read(w);
                    inner.append(&mut subs);
                    if is_prefix {
                        part.assigns = true;
                    } else {
                        part.argv.push(arg);
                    }
                }
                CommandPrefixOrSuffixItem::IoRedirect(io) => {
                    let (files, fed, mut subs, mut procs) = self.redirect_of(io);
                    part.redirects_files |= files;
                    part.fed |= fed;
                    inner.append(&mut subs);
                    nested.append(&mut procs);
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => nested.push(sub),
            }
        }
        // An assignment alone runs nothing; what it substitutes still runs.
        let runs = !part.argv.is_empty() || part.redirects_files;
        let at = if runs {
            self.parsed.parts.push(part);
            Some(self.parsed.parts.len() - 1)
        } else {
            None
        };
        let inside = at.or(self.place.inside);
        for (text, offset, fixed) in inner {
            self.nested_text(&text, offset, fixed, inside);
        }
        for sub in nested {
            let saved = self.place.inside;
            self.place.inside = inside;
            self.list(&sub.list);
            self.place.inside = saved;
        }
        at.map(|i| (i, i))
    }

    /// A redirection of a compound command: only what it substitutes matters.
    fn redirect(&mut self, io: &IoRedirect, inside: Option<usize>) {
        let (_, _, subs, procs) = self.redirect_of(io);
        for (text, offset, fixed) in subs {
            self.nested_text(&text, offset, fixed, inside.or(self.place.inside));
        }
        for sub in procs {
            self.list(&sub.list);
        }
    }

    /// What a redirection does: whether it reads or writes a file, whether it feeds the
    /// command's input, the commands it substitutes, and its process substitutions.
    #[allow(clippy::type_complexity)]
    fn redirect_of<'t>(
        &mut self,
        io: &'t IoRedirect,
    ) -> (bool, bool, Vec<Sub>, Vec<&'t ast::SubshellCommand>) {
        let mut subs = Vec::new();
        let mut procs = Vec::new();
        let (files, fed) = match io {
            IoRedirect::File(_, _, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let (arg, mut s) = self.read(w);
                    subs.append(&mut s);
                    (arg.text != "/dev/null", false)
                }
                IoFileRedirectTarget::Fd(_) => (false, false),
                IoFileRedirectTarget::Duplicate(w) => {
                    let (arg, mut s) = self.read(w);
                    subs.append(&mut s);
                    (arg.dynamic, false)
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    procs.push(sub);
                    (false, false)
                }
            },
            IoRedirect::OutputAndError(w, _) => {
                let (arg, mut s) = self.read(w);
                subs.append(&mut s);
                (arg.text != "/dev/null", false)
            }
            IoRedirect::HereString(fd, w) => {
                let (_, mut s) = self.read(w);
                subs.append(&mut s);
                (false, fd.is_none_or(|f| f == 0))
            }
            IoRedirect::HereDocument(fd, doc) => {
                let body = &doc.doc.value;
                let expands = doc.requires_expansion && (body.contains('$') || body.contains('`'));
                // A body the word grammar refuses, or whose brackets do not pair (`${X[…)`,
                // on which it backtracks for seconds), may run anything: a doubt.
                let pieces = (expands && paired(body))
                    .then(|| word::parse_heredoc(body, &self.options).ok())
                    .flatten();
                if expands && pieces.is_none() {
                    let why = "a here-document whose expansions it cannot pair".to_string();
                    self.parsed.doubts.push(Doubt::Unparsed(why));
                }
                if let Some(pieces) = pieces {
                    let (span, own) = self.span_of(&doc.doc);
                    let fixed = (!own).then(|| span.clone());
                    for p in pieces {
                        if let WordPiece::CommandSubstitution(c)
                        | WordPiece::BackquotedCommandSubstitution(c) = p.piece
                        {
                            subs.push((c, span.start + p.start_index, fixed.clone()));
                        }
                    }
                }
                (false, fd.is_none_or(|f| f == 0))
            }
        };
        (files, fed, subs, procs)
    }

    /// A word outside any command's argv (a `for` list, a `case` value): only what it
    /// substitutes runs.
    fn word(&mut self, w: &ast::Word, inside: Option<usize>) {
        let (_, subs) = self.read(w);
        for (text, offset, fixed) in subs {
            self.nested_text(&text, offset, fixed, inside.or(self.place.inside));
        }
    }

    fn read(&self, w: &ast::Word) -> (Arg, Vec<Sub>) {
        let (span, own) = self.span_of(w);
        let r = read_word(&w.value, span.start, &self.options);
        let mut arg = r.arg;
        // A word whose value is not its own bytes (the grammar drops a line continuation
        // inside it; backquotes with escapes) is marked where it is written, and what it
        // substitutes points at the whole word: offsets counted in its value would land
        // elsewhere in the command, even inside a character.
        let fixed = match &self.place.fixed {
            Some(outer) => Some(outer.clone()),
            None if !own || r.moved => Some(span.clone()),
            None => None,
        };
        arg.span = self.place.fixed.clone().unwrap_or(span);
        let inner = r.inner.into_iter();
        (arg, inner.map(|(t, at)| (t, at, fixed.clone())).collect())
    }

    /// Where a word is written in the whole command, and whether its value is exactly the
    /// bytes written there.
    fn span_of(&self, w: &ast::Word) -> (Range<usize>, bool) {
        let offset = self.place.offset;
        let Some(loc) = w.loc.as_ref() else {
            return (offset..offset, false);
        };
        let (start, end) = (self.local(loc.start.index), self.local(loc.end.index));
        let own = self.text.get(start..end) == Some(w.value.as_str());
        (offset + start..offset + end.max(start), own)
    }

    /// The byte of the text being read where the grammar's char `index` is.
    fn local(&self, index: usize) -> usize {
        match &self.chars {
            Some(v) => v.get(index).copied().unwrap_or(self.text.len()),
            None => index.min(self.text.len()),
        }
    }

    /// Reads a substituted command, which runs inside part `inside`.
    fn nested_text(
        &mut self,
        text: &str,
        offset: usize,
        fixed: Option<Range<usize>>,
        inside: Option<usize>,
    ) {
        if offset == usize::MAX {
            let why = "${…}".to_string();
            self.parsed.doubts.push(Doubt::Eval(why));
            return;
        }
        let place = Place {
            offset,
            fixed: self.place.fixed.clone().or(fixed),
            inside,
            depth: self.place.depth + 1,
        };
        read_at(text, &place, self.parsed);
    }

    /// `((…))`. Bash reads it as arithmetic only where its own scan finds the closing `))`:
    /// `( (git push) )`, `((git push) )` and even `((a); (b))` are subshells to bash, which
    /// the grammar reads as arithmetic all the same. So its text is also read as commands:
    /// nothing it may run goes unseen, and an expression read as a command (`i++`) names no
    /// program a rule knows, so a person is asked.
    fn arithmetic(&mut self, a: &ast::ArithmeticCommand) {
        self.doubt_if_substitutes(&a.expr.value);
        let (start, end) = (self.local(a.loc.start.index), self.local(a.loc.end.index));
        let whole = self.place.offset + start..self.place.offset + end.max(start);
        let at = self
            .text
            .get(start..end)
            .and_then(|t| t.find(a.expr.value.as_str()));
        match at {
            Some(i) => {
                let offset = self.place.offset + start + i;
                self.nested_text(&a.expr.value, offset, None, self.place.inside);
            }
            None => {
                let offset = self.place.offset + start;
                self.nested_text(&a.expr.value, offset, Some(whole), self.place.inside);
            }
        }
    }

    /// Arithmetic and `[[ … ]]` are read as text: a substitution inside them is a doubt.
    fn doubt_if_substitutes(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') || text.contains("<(") {
            self.parsed
                .doubts
                .push(Doubt::Eval(text.chars().take(40).collect()));
        }
    }
}
