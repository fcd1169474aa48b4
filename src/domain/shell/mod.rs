//! What a shell command runs, read with a real shell grammar (bash's, as the harnesses' shells
//! run it), not split by hand: the one model of a command that the policy, the danger marks,
//! allowances and the screens all read, so no two of them can disagree about what runs.
//!
//! [`parse`] gives every simple command the text would run, each as its argv: through `&&`,
//! `||`, `;`, `|`, subshells, groups, loops, functions, `$(…)`, backquotes, process
//! substitutions and here-documents, and through the wrappers that run the rest of their
//! words (`sudo`, `env`, `command`, `exec`, `nice`, `timeout`, `xargs`, `time`, `bash -c`, …).
//! Leading assignments are dropped, quotes and escapes undone, and the program is also read
//! by its base name (`/usr/bin/git` is `git`).
//!
//! Where the text does not say for certain what runs (`eval`, a command word from a variable,
//! a shell reading a here-document or a pipe, an alias, text the grammar refuses, an option
//! of a known program that could move its subcommand), the reading carries a [`Doubt`]: the
//! policy then treats the call as matching every rule that could apply, and no allowance
//! passes it. Reading fails closed.

mod peel;
mod walk;

pub use walk::unreadable;
mod word;

use std::ops::Range;

pub use peel::{has_subcommands, subcommand_reading};

/// The longest command read word by word; a longer one is a doubt in itself.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// The deepest brackets are read: the grammar backtracks between `((` and `( (`, `$((` and
/// `$( (`, at each level, so its time doubles with every one (a dozen take milliseconds, 28
/// a minute; eleven `$(` in a here-document, half a second).
pub const MAX_NESTING: usize = 10;

/// One word of a command as the shell will pass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The word with its quotes and escapes undone; a word the shell expands at run time
    /// (`$X`, `$(…)`, `*`) keeps its text as written.
    pub text: String,
    /// Where it is in the command, in bytes (a word inside `bash -c '…'` points at that
    /// string).
    pub span: Range<usize>,
    /// Its value is only known when it runs: a parameter, a substitution, arithmetic, a
    /// brace expansion or a file-name pattern.
    pub dynamic: bool,
}

/// One simple command: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The wrappers peeled off before the program (`sudo`, `env`, `timeout`, …), as written.
    pub wrappers: Vec<Arg>,
    /// The program and its arguments, `argv[0]` as written.
    pub argv: Vec<Arg>,
    /// It has leading assignments (`GIT_TRACE=0 git …`), which change its environment.
    pub assigns: bool,
    /// It writes or reads a file through a redirection other than to `/dev/null` or
    /// another descriptor.
    pub redirects_files: bool,
    /// Its input is a here-document, a here-string or a pipe.
    pub fed: bool,
    /// The part whose output is piped into this one.
    pub piped_from: Option<usize>,
    /// The `|` that feeds it, when piped.
    pub pipe: Option<Range<usize>>,
    /// The part in one of whose words it runs (`$(…)`, `<(…)`, `bash -c '…'`), if any.
    pub inside: Option<usize>,
}

impl Part {
    /// The program's name without its directory: `/usr/bin/git` is `git`, `\git` is `git`.
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", |a| base(&a.text))
    }

    /// The part as it reads once its spelling is set aside: the program by its base name,
    /// then its arguments, one space between words.
    pub fn canonical(&self) -> String {
        let mut out = self.program().to_string();
        for a in self.argv.iter().skip(1) {
            out.push(' ');
            out.push_str(&a.text);
        }
        out
    }

    /// The part exactly as written, its words unquoted (what an allow rule reads: a program
    /// named by a path, a wrapper or an assignment is not the program the rule allows).
    pub fn literal(&self) -> String {
        let words = self.wrappers.iter().chain(&self.argv);
        words.map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// Whether any of its words is only known when it runs.
    pub fn dynamic(&self) -> bool {
        self.argv.iter().any(|a| a.dynamic)
    }
}

/// Why the reading cannot say for certain what runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doubt {
    /// The grammar refuses the text (an unclosed quote, a stray `)`, …).
    Unparsed(String),
    /// `eval`, `source` of a string, or another builtin that runs text as a command.
    Eval(String),
    /// The program is named by a variable, a substitution or a pattern.
    DynamicProgram(String),
    /// A shell runs what it reads from a pipe, a here-document or a here-string.
    ShellReadsInput(String),
    /// `bash -c` with a string known only when it runs.
    DynamicScript(String),
    /// An alias is defined: it may rename any command after it.
    Alias,
    /// An option before a known program's subcommand that may move it (`git --foo push`).
    UnknownOption { program: String, option: String },
    /// The command is too long to read word by word.
    TooLong,
    /// A control character other than tab and newline: no screen shows it, and the grammar
    /// reads a here-document tag of one (`<<\r`) without end.
    ControlCharacter(char),
    /// Brackets nested deeper than `MAX_NESTING`: the grammar's time doubles with each
    /// level, and no command an agent writes goes so deep.
    TooNested,
    /// The grammar did not finish reading it in time (`MAX_READING`).
    TooSlow,
}

impl Doubt {
    /// One plain line: why what runs cannot be told.
    pub fn reason(&self) -> String {
        match self {
            Doubt::Unparsed(why) => format!("the shell's grammar cannot read it ({why})"),
            Doubt::Eval(w) => format!("`{w}` runs text as a command"),
            Doubt::DynamicProgram(w) => format!("the program `{w}` is known only when it runs"),
            Doubt::ShellReadsInput(w) => format!("`{w}` runs whatever it reads on its input"),
            Doubt::DynamicScript(w) => format!("`{w} -c` runs a string known only when it runs"),
            Doubt::Alias => "an alias may rename any command after it".into(),
            Doubt::UnknownOption { program, option } => {
                format!("`{program} {option}`: an option that may change what it runs")
            }
            Doubt::TooLong => "it is too long to read word by word".into(),
            Doubt::TooSlow => "it takes too long to read word by word".into(),
            Doubt::TooNested => {
                format!("it nests brackets more than {MAX_NESTING} deep")
            }
            Doubt::ControlCharacter(c) => {
                format!(
                    "it holds a control character (U+{:04X}) no screen shows",
                    *c as u32
                )
            }
        }
    }
}

/// A command read: what it runs, and why that may not be all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub parts: Vec<Part>,
    pub doubts: Vec<Doubt>,
}

impl Parsed {
    /// Whether the reading says for certain what runs.
    pub fn certain(&self) -> bool {
        self.doubts.is_empty()
    }
}

/// Reads `command` as bash would run it.
pub fn parse(command: &str) -> Parsed {
    if command.len() > MAX_COMMAND_BYTES {
        return Parsed {
            parts: Vec::new(),
            doubts: vec![Doubt::TooLong],
        };
    }
    // The grammar backtracks without bound on some text no check before it foresees: it
    // reads on a thread of its own, and text it has not read in `MAX_READING` is a doubt.
    // The thread is left to finish on its own.
    let text = command.to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("shell-reading".into())
        .stack_size(READING_STACK)
        .spawn(move || {
            let _ = tx.send(read(&text));
        });
    match spawned {
        Ok(_) => rx.recv_timeout(MAX_READING).unwrap_or_else(|_| Parsed {
            parts: Vec::new(),
            doubts: vec![Doubt::TooSlow],
        }),
        Err(_) => read(command),
    }
}

/// How long the grammar may read one command; a few milliseconds is usual.
const MAX_READING: std::time::Duration = std::time::Duration::from_secs(2);
/// The reading thread's stack: the grammars recurse at every level of nesting.
const READING_STACK: usize = 16 << 20;

fn read(command: &str) -> Parsed {
    let mut parsed = Parsed::default();
    // brush-parser panics on some text, in its program grammar (a descriptor too large for
    // an i32, `77777777777>x`), its tokenizer (some unclosed expansions) and its word grammar
    // (`~22222222222222222222`, a directory-stack index too large): a grammar that fails is
    // text it cannot read, never a crashed hook.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        walk::read(command, &mut parsed);
        peel::peel_all(&mut parsed);
        parsed
    }));
    read.unwrap_or_else(|_| Parsed {
        parts: Vec::new(),
        doubts: vec![Doubt::Unparsed("the grammar failed on it".into())],
    })
}

/// How deep brackets (`(`, `[`, `{`, in any mix) nest in `text`, quotes or not: the
/// grammars backtrack at every level of `$(`, `$((`, `$[`, `${` and `((`, so their time
/// doubles with each. Counting a quoted one too only ever makes a doubt of it.
pub fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A program's name without its directory: `/usr/bin/rm` is `rm`.
pub fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests;
