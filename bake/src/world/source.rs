//! Mapping between TOML byte spans, dotted key paths and `line:column` positions, so that every
//! world-file error can say *where* it is.
//!
//! Key paths are written the way users read them: `volume.size`, `stroke[3].radius`.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::WorldError;

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Splits `stroke[3].radius` into `[Key(stroke), Index(3), Key(radius)]`.
/// Malformed indices are kept as keys: the result only steers a lookup, it never fails.
fn parse_path(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(open) = rest.find('[') {
            out.push(Segment::Key(rest[..open].to_owned()));
            rest = &rest[open..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(close) = stripped.find(']') else { break };
                match stripped[..close].parse() {
                    Ok(i) => out.push(Segment::Index(i)),
                    Err(_) => out.push(Segment::Key(stripped[..close].to_owned())),
                }
                rest = &stripped[close + 1..];
            }
        } else {
            out.push(Segment::Key(rest.to_owned()));
        }
    }
    out
}

fn render_path(segments: &[Segment]) -> String {
    let mut s = String::new();
    for seg in segments {
        match seg {
            Segment::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Segment::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    // Step back to a char boundary so slicing cannot panic on a span inside a multi-byte char.
    let offset = (0..=offset).rev().find(|&o| text.is_char_boundary(o)).unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A parsed TOML document kept alongside its text, used to place diagnostics.
pub(crate) struct SourceDoc<'a> {
    pub file: &'a Path,
    pub text: &'a str,
    doc: Option<Spanned<DeTable<'a>>>,
}

impl<'a> SourceDoc<'a> {
    /// Parses `text` for span lookups. A document with errors still yields what could be parsed
    /// (a duplicate key keeps its first definition), so errors can still be placed under a key.
    pub fn new(file: &'a Path, text: &'a str) -> Self {
        let (doc, _errors) = DeTable::parse_recoverable(text);
        SourceDoc { file, text, doc: Some(doc) }
    }

    /// Refuses arrays in the document longer or shorter than what `parsed` (the value they were
    /// deserialised into) holds: serde fills a fixed-size array such as `size = [nx, ny, nz]` from
    /// the first elements and silently drops the rest.
    pub fn check_array_lengths<T: serde::Serialize>(&self, parsed: &T) -> Result<(), WorldError> {
        let (Some(doc), Ok(toml::Value::Table(value))) = (&self.doc, toml::Value::try_from(parsed)) else {
            return Ok(());
        };
        let mut path = Vec::new();
        match compare_table(doc.get_ref(), &value, &mut path) {
            None => Ok(()),
            Some((span_start, expected, got)) => {
                Err(self.error_at(span_start, render_path(&path), format!("expected an array of {expected} elements; got {got}")))
            }
        }
    }

    /// The diagnostic for `message` about the value at dotted `key`. When the key is absent (its
    /// default was used) the nearest enclosing table that is present is pointed at instead.
    pub fn error_at_key(&self, key: &str, message: impl Into<String>) -> WorldError {
        let offset = self.doc.as_ref().map_or(0, |d| locate(d.get_ref(), &parse_path(key)));
        self.error_at(offset, key.to_owned(), message.into())
    }

    /// Converts a `toml` parse/deserialise error into a one-line diagnostic naming the key path
    /// that contains the error's span.
    pub fn error_from_toml(&self, err: &toml::de::Error) -> WorldError {
        let span = err.span().unwrap_or(0..0);
        let mut path = self.doc.as_ref().map(|d| path_at(d.get_ref(), &span)).unwrap_or_default();
        // A duplicate key is not in the tree (the first definition is): name it from the text.
        if path.is_empty() && !span.is_empty() {
            path = key_at(self.text, &span);
        }
        // Diagnostics are one line each.
        let message = err.message().split_whitespace().collect::<Vec<_>>().join(" ");
        // serde reports a missing field at the enclosing table; name the field itself.
        if let Some(field) = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
            path.push(Segment::Key(field.to_owned()));
        }
        self.error_at(span.start, render_path(&path), message)
    }

    fn error_at(&self, offset: usize, key: String, message: String) -> WorldError {
        let (line, column) = line_col(self.text, offset);
        WorldError::Invalid { file: PathBuf::from(self.file), line, column, key, message }
    }
}

/// The dotted key written at `span` (a key or a table header), prefixed with the table header it
/// sits under, read from the text itself.
fn key_at(text: &str, span: &Range<usize>) -> Vec<Segment> {
    let Some(written) = text.get(span.clone()) else { return Vec::new() };
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let in_header = text[line_start..span.start].trim_start().starts_with('[');
    let mut key = String::new();
    if !in_header {
        let header = text[..line_start].lines().rev().map(str::trim).find(|l| l.starts_with('['));
        if let Some(h) = header {
            let h = h.split('#').next().unwrap_or_default();
            key.push_str(h.trim().trim_start_matches('[').trim_end_matches(']').trim());
        }
    }
    let written = written.trim().trim_matches(['[', ']']).trim();
    if !key.is_empty() && !written.is_empty() {
        key.push('.');
    }
    key.push_str(written);
    parse_path(&key.replace(['"', '\''], ""))
}

/// The first array whose length differs between the document and the deserialised value:
/// `(byte offset, length kept, length written)`; `path` is left pointing at it.
fn compare_table(doc: &DeTable<'_>, value: &toml::Table, path: &mut Vec<Segment>) -> Option<(usize, usize, usize)> {
    for (k, v) in doc.iter() {
        let Some(other) = value.get(k.get_ref().as_ref()) else { continue };
        path.push(Segment::Key(k.get_ref().to_string()));
        if let Some(found) = compare_value(v, other, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn compare_value(doc: &Spanned<DeValue<'_>>, value: &toml::Value, path: &mut Vec<Segment>) -> Option<(usize, usize, usize)> {
    match (doc.get_ref(), value) {
        (DeValue::Table(t), toml::Value::Table(v)) => compare_table(t, v, path),
        (DeValue::Array(a), toml::Value::Array(v)) => {
            if a.len() != v.len() {
                return Some((doc.span().start, v.len(), a.len()));
            }
            for (i, (d, x)) in a.iter().zip(v).enumerate() {
                path.push(Segment::Index(i));
                if let Some(found) = compare_value(d, x, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        _ => None,
    }
}

/// Byte offset of the value at `path`, or of the deepest present ancestor (0 for none).
fn locate(table: &DeTable<'_>, path: &[Segment]) -> usize {
    let mut best = 0;
    let mut current: Option<&Spanned<DeValue<'_>>> = None;
    for seg in path {
        let next = match (seg, current) {
            (Segment::Key(k), None) => table.get(k.as_str()),
            (Segment::Key(k), Some(v)) => v.get_ref().as_table().and_then(|t| t.get(k.as_str())),
            (Segment::Index(i), Some(v)) => v.get_ref().as_array().and_then(|a| a.get(*i)),
            (Segment::Index(_), None) => None,
        };
        match next {
            Some(v) => {
                best = v.span().start;
                current = Some(v);
            }
            // An absent key (its default was used): point at the parent that is present.
            None => break,
        }
    }
    best
}

/// The deepest key path whose key or value span contains `span.start`. An empty span is
/// document-level (serde reports a missing top-level field at `0..0`) and maps to the root.
fn path_at(table: &DeTable<'_>, span: &Range<usize>) -> Vec<Segment> {
    fn walk(value: &Spanned<DeValue<'_>>, at: usize, path: &mut Vec<Segment>) -> bool {
        match value.get_ref() {
            DeValue::Table(t) => walk_table(t, at, path),
            DeValue::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    path.push(Segment::Index(i));
                    if walk(item, at, path) || item.span().contains(&at) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            _ => false,
        }
    }
    fn walk_table(t: &DeTable<'_>, at: usize, path: &mut Vec<Segment>) -> bool {
        for (k, v) in t.iter() {
            path.push(Segment::Key(k.get_ref().to_string()));
            if walk(v, at, path) || k.span().contains(&at) || v.span().contains(&at) {
                return true;
            }
            path.pop();
        }
        false
    }
    if span.is_empty() {
        return Vec::new();
    }
    let at = span.start;
    let mut path = Vec::new();
    walk_table(table, at, &mut path);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_and_render() {
        let p = parse_path("stroke[3].radius");
        assert_eq!(p, vec![Segment::Key("stroke".into()), Segment::Index(3), Segment::Key("radius".into())]);
        assert_eq!(render_path(&p), "stroke[3].radius");
    }

    #[test]
    fn line_col_counts_chars() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, t.find('=').unwrap()), (1, 3));
        assert_eq!(line_col(t, t.rfind('=').unwrap()), (2, 4));
    }

    #[test]
    fn locate_finds_nested_and_array_values() {
        let t = "name = 'x'\n[volume]\nsize = [1, 2, 3]\n[[stroke]]\nradius = 1\n[[stroke]]\nradius = 2\n";
        let doc = DeTable::parse(t).unwrap();
        let at = |k: &str| line_col(t, locate(doc.get_ref(), &parse_path(k)));
        assert_eq!(at("volume.size"), (3, 8));
        assert_eq!(at("stroke[1].radius"), (7, 10));
        // Absent key: falls back to the enclosing table header.
        assert_eq!(at("volume.tile_size"), (2, 1));
        assert_eq!(at("nothing.at.all"), (1, 1));
    }

    #[test]
    fn path_at_names_the_innermost_key() {
        let t = "name = 'x'\n[volume]\nsize = [1, -2, 3]\n";
        let doc = DeTable::parse(t).unwrap();
        let off = t.find("-2").unwrap();
        assert_eq!(render_path(&path_at(doc.get_ref(), &(off..off + 2))), "volume.size[1]");
    }
}
