//! The sorting table: every line's parsed keys plus a compact entry per
//! line (first-key hint, text, position) that the sort moves around.

use std::cmp::Ordering;

use super::Settings;
use super::compare::{self, Value, compare_values, parse_value};
use super::keys;

/// One line to sort: the first key's hint, the line and its position.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    hint: u64,
    /// The line's text, without its terminator.
    pub line: &'a [u8],
    index: usize,
}

/// Parsed keys of every line; `values` holds `keys.len()` entries per line.
pub struct Table<'a, 's> {
    values: Vec<Value<'a>>,
    settings: &'s Settings,
}

impl<'a, 's> Table<'a, 's> {
    /// Parses every line's keys; entries come back in input order.
    pub fn new(lines: &[&'a [u8]], settings: &'s Settings) -> (Self, Vec<Entry<'a>>) {
        let mut values = Vec::with_capacity(lines.len() * settings.keys.len());
        let mut entries = Vec::with_capacity(lines.len());
        for (index, line) in lines.iter().enumerate() {
            let first = values.len();
            for key in &settings.keys {
                let text = keys::extract(line, key, settings.separator);
                values.push(parse_value(text, &key.flags));
            }
            let hint = compare::hint(&values[first], &settings.keys[0].flags);
            entries.push(Entry { hint, line, index });
        }
        (Table { values, settings }, entries)
    }

    /// Compares two lines by their keys only.
    pub fn compare_keys(&self, a: &Entry, b: &Entry) -> Ordering {
        let first_key = &self.settings.keys[0].flags;
        let by_hint = a.hint.cmp(&b.hint);
        if by_hint != Ordering::Equal {
            return if first_key.reverse {
                by_hint.reverse()
            } else {
                by_hint
            };
        }
        let count = self.settings.keys.len();
        let left = &self.values[a.index * count..(a.index + 1) * count];
        let right = &self.values[b.index * count..(b.index + 1) * count];
        for ((key, x), y) in self.settings.keys.iter().zip(left).zip(right) {
            let order = compare_values(x, y, &key.flags);
            if order != Ordering::Equal {
                return if key.flags.reverse {
                    order.reverse()
                } else {
                    order
                };
            }
        }
        Ordering::Equal
    }

    /// Keys first, then (unless `-s` or `-u`) the whole line as bytes.
    pub fn compare(&self, a: &Entry, b: &Entry) -> Ordering {
        let order = self.compare_keys(a, b);
        if order != Ordering::Equal || self.settings.stable || self.settings.unique {
            return order;
        }
        let order = a.line.cmp(b.line);
        if self.settings.global.reverse {
            order.reverse()
        } else {
            order
        }
    }
}
