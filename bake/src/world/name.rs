//! World names: a bake is written to `--out/<name>/`, so a name must be a single, portable path
//! component that can never climb out of `--out` or name something other than a child of it.
//!
//! The alphabet is ASCII letters, digits, `_`, `-` and `.`; 1 to [`MAX_NAME_LEN`] characters;
//! neither the first nor the last character is a `.` (which excludes `.`, `..`, hidden names and the
//! trailing dots Windows strips). Separators, control characters, spaces and any non-ASCII
//! character (lookalikes such as `∕` or fullwidth letters) are refused.

/// Longest accepted name: `.<name>.staging-<pid>` beside the output must stay far below the usual
/// 255-byte file-name limit.
pub const MAX_NAME_LEN: usize = 64;

/// Why `name` is not a safe world name, or `None` when it is.
pub fn name_problem(name: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() {
        return Some("must not be empty".into());
    }
    if let Some(c) = name.chars().find(|&c| !allowed(c)) {
        return Some(format!(
            "may only hold ASCII letters, digits, '_', '-' and '.' (it names the directory --out/<name>); \
             {c:?} is not allowed in {name:?}"
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!("must be at most {MAX_NAME_LEN} characters; got {}", name.len()));
    }
    if name.starts_with('.') || name.ends_with('.') {
        return Some(format!("must not start or end with '.'; got {name:?}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_accepted() {
        for ok in ["tiny", "ice_caves", "a", "A-1.v2", "x.y.z", &"n".repeat(MAX_NAME_LEN)] {
            assert_eq!(name_problem(ok), None, "{ok:?}");
        }
    }

    #[test]
    fn names_that_could_leave_out_are_refused() {
        let long = "n".repeat(MAX_NAME_LEN + 1);
        let cases = [
            "",
            ".",
            "..",
            "../x",
            "/etc",
            "/tmp/victim",
            "a/b",
            "a\\b",
            "C:",
            "C:\\x",
            "a\0b",
            "a\nb",
            "\t",
            " ",
            "a b",
            " a",
            "a ",
            "a.",
            "x..",
            ".hidden",
            "..x",
            "∕etc",
            "ａ",
            "é",
            "a\u{202e}b",
            "~",
            "$HOME",
            "*",
            "a:b",
            &long,
        ];
        for bad in cases {
            assert!(name_problem(bad).is_some(), "{bad:?} should be refused");
        }
        assert!(name_problem(&long).unwrap().contains("at most 64"));
        assert!(name_problem("../x").unwrap().contains("'/' is not allowed"));
    }
}
