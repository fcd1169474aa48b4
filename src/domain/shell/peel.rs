//! The program under its wrappers, and a known program's subcommand under its options.
//!
//! `sudo -u root env A=1 nice -n 5 git push` runs `git push`; `bash -c 'git push'` runs it
//! too, and `find . -exec rm -rf {} +` runs `rm`. For git, kubectl, terraform, docker, npm
//! and cargo, the options that may come before the subcommand are known
//! (`git -C dir push`, `kubectl --context x delete`); an option not known there is a doubt,
//! since it could take the word after it and so move the subcommand.

use super::walk::{Place, read_at};
use super::{Arg, Doubt, Parsed, Part, base};

/// Shells: `-c` runs a string, and without a script they run their input.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox",
];

/// A wrapper that runs the rest of its words: its name, the options that take a value as
/// the next word, and how many plain words it takes before the command (`timeout 10 …`).
struct Wrapper {
    names: &'static [&'static str],
    valued: &'static [&'static str],
    leading: usize,
    /// It takes `NAME=value` words before the command.
    assigns: bool,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["sudo"],
        valued: &[
            "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R",
        ],
        leading: 0,
        assigns: true,
    },
    Wrapper {
        names: &["doas"],
        valued: &["-u", "-C"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["env"],
        valued: &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        leading: 0,
        assigns: true,
    },
    Wrapper {
        names: &["command", "builtin"],
        valued: &[],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["exec"],
        valued: &["-a"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["nice"],
        valued: &["-n", "--adjustment"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["nohup", "setsid", "unbuffer", "chronic"],
        valued: &[],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["stdbuf"],
        valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["ionice"],
        valued: &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["time"],
        valued: &["-f", "-o", "--format", "--output"],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["timeout"],
        valued: &["-s", "-k", "--signal", "--kill-after"],
        leading: 1,
        assigns: false,
    },
    Wrapper {
        names: &["xargs"],
        valued: &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-d",
            "-E",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-lines",
            "--replace",
            "--eof",
        ],
        leading: 0,
        assigns: false,
    },
    Wrapper {
        names: &["watch"],
        valued: &["-n", "-d", "--interval", "--differences"],
        leading: 0,
        assigns: false,
    },
];

/// Builtins that run text as a command.
const EVALUATORS: &[&str] = &["eval", "fc", "trap"];

/// Peels every part, reading what its wrappers and shells run as parts of their own.
pub fn peel_all(parsed: &mut Parsed) {
    let mut i = 0;
    while i < parsed.parts.len() {
        peel(parsed, i);
        i += 1;
    }
}

fn peel(parsed: &mut Parsed, at: usize) {
    loop {
        let part = &mut parsed.parts[at];
        let Some(first) = part.argv.first() else {
            return;
        };
        if first.dynamic {
            let w = first.text.clone();
            parsed.doubts.push(Doubt::DynamicProgram(w));
            return;
        }
        let name = base(&first.text).to_string();
        if let Some(w) = WRAPPERS.iter().find(|w| w.names.contains(&name.as_str())) {
            // `command -v git` and `xargs` with nothing after it run no other program.
            if name == "command"
                && part
                    .argv
                    .iter()
                    .skip(1)
                    .any(|a| a.text.starts_with("-v") || a.text.starts_with("-V"))
            {
                return;
            }
            let Some(skip) = wrapped_at(&part.argv, w) else {
                return;
            };
            if name == "env"
                && part.argv[1..skip]
                    .iter()
                    .any(|a| a.text.starts_with("-S") || a.text.starts_with("--split-string"))
            {
                let option = "-S".to_string();
                parsed.doubts.push(Doubt::UnknownOption {
                    program: name,
                    option,
                });
                return;
            }
            if name == "watch" {
                // `watch` hands its words to `sh -c` as one string.
                let words: Vec<Arg> = part.argv.drain(skip..).collect();
                let script = words
                    .iter()
                    .map(|a| a.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let span = words.first().map(|a| a.span.start).unwrap_or(0)
                    ..words.last().map(|a| a.span.end).unwrap_or(0);
                let place = Place {
                    offset: span.start,
                    fixed: Some(span),
                    inside: Some(at),
                    depth: 1,
                };
                read_at(&script, &place, parsed);
                return;
            }
            let peeled: Vec<Arg> = part.argv.drain(..skip).collect();
            part.wrappers.extend(peeled);
            continue;
        }
        if EVALUATORS.contains(&name.as_str()) || name == "source" || name == "." {
            if name != "source" && name != "." {
                parsed.doubts.push(Doubt::Eval(name));
            }
            return;
        }
        if name == "alias" {
            parsed.doubts.push(Doubt::Alias);
            return;
        }
        if SHELLS.contains(&name.as_str()) {
            shell(parsed, at, &name);
            return;
        }
        if name == "find" {
            find_exec(parsed, at);
            return;
        }
        if let Err(doubt) = subcommand_reading(&parsed.parts[at]) {
            parsed.doubts.push(doubt);
        }
        return;
    }
}

/// Where the wrapped command starts among a wrapper's words; `None` when there is none.
fn wrapped_at(argv: &[Arg], w: &Wrapper) -> Option<usize> {
    let mut i = 1;
    while i < argv.len() {
        let t = argv[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            let takes = w.valued.contains(&t);
            i += if takes { 2 } else { 1 };
            continue;
        }
        if w.assigns && is_assignment(t) {
            i += 1;
            continue;
        }
        break;
    }
    let mut left = w.leading;
    while left > 0 && i < argv.len() {
        i += 1;
        left -= 1;
    }
    (i < argv.len()).then_some(i)
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A shell: `-c STRING` is read as a command of its own; with no script, it runs its input,
/// which is a doubt when anything feeds it.
fn shell(parsed: &mut Parsed, at: usize, name: &str) {
    let part = &parsed.parts[at];
    let mut i = 1;
    let mut script: Option<Arg> = None;
    let mut has_file = false;
    while i < part.argv.len() {
        let t = part.argv[i].text.as_str();
        if t == "-c" || (t.starts_with('-') && !t.starts_with("--") && t.contains('c')) {
            script = part.argv.get(i + 1).cloned();
            if script.is_none() {
                parsed.doubts.push(Doubt::DynamicScript(name.to_string()));
                return;
            }
            break;
        }
        if t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file"
        {
            i += 2;
            continue;
        }
        if t.starts_with('-') || t.starts_with('+') {
            i += 1;
            continue;
        }
        has_file = true;
        break;
    }
    match script {
        Some(s) if s.dynamic => parsed.doubts.push(Doubt::DynamicScript(name.to_string())),
        Some(s) => {
            let place = Place {
                offset: s.span.start,
                fixed: Some(s.span.clone()),
                inside: Some(at),
                depth: 1,
            };
            read_at(&s.text, &place, parsed);
        }
        None if !has_file && part.fed => {
            parsed.doubts.push(Doubt::ShellReadsInput(name.to_string()))
        }
        None => {}
    }
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`) runs CMD: a part of its own.
fn find_exec(parsed: &mut Parsed, at: usize) {
    let argv = parsed.parts[at].argv.clone();
    let mut i = 1;
    while i < argv.len() {
        if matches!(
            argv[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let mut end = start;
            while end < argv.len() && argv[end].text != ";" && argv[end].text != "+" {
                end += 1;
            }
            if end > start {
                parsed.parts.push(Part {
                    wrappers: Vec::new(),
                    argv: argv[start..end].to_vec(),
                    assigns: false,
                    redirects_files: false,
                    fed: false,
                    piped_from: None,
                    pipe: None,
                    inside: Some(at),
                });
            }
            i = end;
        }
        i += 1;
    }
}

/// A known program's options that may come before its subcommand: those that take the next
/// word as their value, and those that stand alone. An option written `--name=value` takes
/// nothing more.
struct Known {
    names: &'static [&'static str],
    valued: &'static [&'static str],
    alone: &'static [&'static str],
}

const KNOWN: &[Known] = &[
    Known {
        names: &["git"],
        valued: &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
            "--super-prefix",
            "--exec-path",
            "--attr-source",
            "--list-cmds",
        ],
        alone: &[
            "-p",
            "--paginate",
            "-P",
            "--no-pager",
            "--bare",
            "--no-replace-objects",
            "--no-lazy-fetch",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--no-optional-locks",
            "--no-advice",
            "--version",
            "-v",
            "--help",
            "-h",
            "--html-path",
            "--man-path",
            "--info-path",
        ],
    },
    Known {
        names: &["kubectl", "oc"],
        valued: &[
            "--context",
            "--namespace",
            "-n",
            "--kubeconfig",
            "--cluster",
            "--user",
            "-s",
            "--server",
            "--token",
            "--as",
            "--as-group",
            "--as-uid",
            "--certificate-authority",
            "--client-certificate",
            "--client-key",
            "--request-timeout",
            "--tls-server-name",
            "--cache-dir",
            "-v",
            "--v",
            "--log-file",
            "--password",
            "--username",
            "--profile",
            "--profile-output",
            "--vmodule",
        ],
        alone: &[
            "--insecure-skip-tls-verify",
            "--match-server-version",
            "--warnings-as-errors",
            "--disable-compression",
            "--help",
            "-h",
        ],
    },
    Known {
        names: &["terraform", "tofu"],
        valued: &[],
        alone: &["-help", "-version", "--help", "--version", "-h", "-v"],
    },
    Known {
        names: &["docker", "podman"],
        valued: &[
            "-H",
            "--host",
            "-c",
            "--context",
            "--config",
            "-l",
            "--log-level",
            "--tlscacert",
            "--tlscert",
            "--tlskey",
            "--url",
            "--connection",
            "--root",
            "--runroot",
        ],
        alone: &[
            "-D",
            "--debug",
            "--tls",
            "--tlsverify",
            "--remote",
            "-r",
            "--help",
            "-v",
        ],
    },
    Known {
        names: &["npm", "pnpm", "yarn"],
        valued: &[
            "--prefix",
            "-C",
            "--dir",
            "--workspace",
            "-w",
            "--registry",
            "--userconfig",
            "--cache",
            "--loglevel",
            "--otp",
            "--filter",
            "--cwd",
        ],
        alone: &[
            "-g",
            "--global",
            "-f",
            "--force",
            "-s",
            "--silent",
            "-q",
            "--quiet",
            "-d",
            "--dry-run",
            "-y",
            "--yes",
            "--ws",
            "--workspaces",
            "--include-workspace-root",
            "-r",
            "--recursive",
            "--verbose",
            "--no-color",
            "--color",
            "--help",
            "-h",
            "-v",
            "--version",
        ],
    },
    Known {
        names: &["cargo"],
        valued: &["--config", "-Z", "-C", "--color", "--manifest-path"],
        alone: &[
            "-q",
            "--quiet",
            "-v",
            "-vv",
            "--verbose",
            "--locked",
            "--offline",
            "--frozen",
            "--help",
            "-h",
            "-V",
            "--version",
            "--list",
        ],
    },
];

/// A known program's words with the options before its subcommand set aside: `git -C x push
/// -f` reads `git push -f`. `Ok(None)` for a program not known here (or with no
/// subcommand); a [`Doubt`] for an option not known before the subcommand.
pub fn subcommand_reading(part: &Part) -> Result<Option<Vec<String>>, Doubt> {
    let name = part.program();
    let Some(known) = KNOWN.iter().find(|k| k.names.contains(&name)) else {
        return Ok(None);
    };
    let argv = &part.argv;
    let mut i = 1;
    while i < argv.len() {
        let t = argv[i].text.as_str();
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if t == "--" {
            i += 1;
            break;
        }
        let (flag, has_value) = match t.split_once('=') {
            Some((f, _)) => (f, true),
            None => (t, false),
        };
        // `git -C. push`, `kubectl -nprod delete`: a short option with its value attached.
        let attached = !t.starts_with("--")
            && t.len() > 2
            && t.get(..2)
                .is_some_and(|short| known.valued.contains(&short));
        if known.valued.contains(&flag) {
            i += if has_value { 1 } else { 2 };
        } else if known.alone.contains(&flag)
            || attached
            || (has_value && known.names == ["terraform", "tofu"] && flag == "-chdir")
        {
            i += 1;
        } else {
            return Err(Doubt::UnknownOption {
                program: name.to_string(),
                option: t.to_string(),
            });
        }
        if name == "git"
            && (t.starts_with("-c") || t == "--config-env")
            && argv
                .get(i - 1)
                .is_some_and(|v| v.text.to_ascii_lowercase().contains("alias."))
        {
            // `git -c alias.p=push p`: the subcommand is whatever the alias says.
            return Err(Doubt::Alias);
        }
    }
    if name == "cargo" && i == 1 && argv.get(1).is_some_and(|a| a.text.starts_with('+')) {
        i = 2;
    }
    if i >= argv.len() || argv[i].dynamic {
        return match argv.get(i) {
            Some(a) => Err(Doubt::DynamicProgram(format!("{name} {}", a.text))),
            None => Ok(None),
        };
    }
    let mut words = vec![name.to_string()];
    words.extend(argv[i..].iter().map(|a| a.text.clone()));
    Ok(Some(words))
}

/// Whether `name` is a program whose subcommand is read past its options.
pub fn has_subcommands(name: &str) -> bool {
    KNOWN.iter().any(|k| k.names.contains(&name))
}
