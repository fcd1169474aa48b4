//! Shell-style patterns for policy rules: `*` is any run of characters (`/` included),
//! `?` any one character; everything else stands for itself.

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: Vec<char>,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        Glob {
            pattern: pattern.chars().collect(),
        }
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let (p, t) = (&self.pattern, &text);
        // The classic linear matcher: remember the last `*` and retry from there.
        let (mut pi, mut ti) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while ti < t.len() {
            if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
                pi += 1;
                ti += 1;
            } else if pi < p.len() && p[pi] == '*' {
                star = Some((pi, ti));
                pi += 1;
            } else if let Some((sp, st)) = star {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            } else {
                return false;
            }
        }
        p[pi..].iter().all(|c| *c == '*')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_marks_match_like_a_shell() {
        assert!(Glob::new("git status*").matches("git status --short"));
        assert!(Glob::new("git status*").matches("git status"));
        assert!(!Glob::new("git status*").matches("git stash"));
        assert!(Glob::new("src/**").matches("src/a/b.rs"));
        assert!(Glob::new("*.env*").matches("/repo/.env.local"));
        assert!(Glob::new("Bas?").matches("Bash"));
        assert!(!Glob::new("Bash").matches("Bash2"));
        assert!(Glob::new("*").matches(""));
        assert!(Glob::new("a*b*c").matches("aXbYbZc"));
    }
}
