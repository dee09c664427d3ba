//! Typed reads from a parsed TOML document, with errors that name the key and line.

use toml_edit::{Item, TableLike, Value};

/// Reads values out of a document parsed from `text`, so errors can give line numbers.
pub struct Reader<'a> {
    text: &'a str,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Reader<'a> {
        Reader { text }
    }

    /// `line N, key K: message`.
    pub fn error(&self, item: &Item, key: &str, msg: &str) -> String {
        match item.span() {
            Some(span) => format!("line {}, key `{key}`: {msg}", self.line(span.start)),
            None => format!("key `{key}`: {msg}"),
        }
    }

    pub fn error_at(&self, span: Option<std::ops::Range<usize>>, key: &str, msg: &str) -> String {
        match span {
            Some(span) => format!("line {}, key `{key}`: {msg}", self.line(span.start)),
            None => format!("key `{key}`: {msg}"),
        }
    }

    /// A TOML syntax error on one line (`line N: message`), for a one-line error message;
    /// toml_edit's own rendering spans several lines with a source excerpt.
    pub fn syntax_error(&self, e: &toml_edit::TomlError) -> String {
        let message = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        match e.span() {
            Some(span) => format!("line {}: {message}", self.line(span.start)),
            None => message,
        }
    }

    /// The line a span starts on (0 when unknown).
    pub fn line_at(&self, span: Option<std::ops::Range<usize>>) -> usize {
        span.map(|s| self.line(s.start)).unwrap_or(0)
    }

    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub fn string(&self, item: &Item, key: &str) -> Result<String, String> {
        match item.as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(self.error(
                item,
                key,
                &format!("expected a string, found {}", type_name(item)),
            )),
        }
    }

    pub fn bool(&self, item: &Item, key: &str) -> Result<bool, String> {
        item.as_bool().ok_or_else(|| {
            self.error(
                item,
                key,
                &format!("expected true or false, found {}", type_name(item)),
            )
        })
    }

    pub fn string_list(&self, item: &Item, key: &str) -> Result<Vec<String>, String> {
        let Some(arr) = item.as_array() else {
            return Err(self.error(
                item,
                key,
                &format!("expected a list of strings, found {}", type_name(item)),
            ));
        };
        arr.iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.error_at(v.span(), key, "expected a list of strings"))
            })
            .collect()
    }

    /// A string, or a list of strings, as a list.
    pub fn string_or_list(&self, item: &Item, key: &str) -> Result<Vec<String>, String> {
        if let Some(s) = item.as_str() {
            return Ok(vec![s.to_string()]);
        }
        if item.as_array().is_some() {
            return self.string_list(item, key);
        }
        Err(self.error(
            item,
            key,
            &format!(
                "expected a string or a list of strings, found {}",
                type_name(item)
            ),
        ))
    }

    /// An integer from `min` to 65535 (a TCP port, or a count of them).
    pub fn port(&self, item: &Item, key: &str, min: u16) -> Result<u16, String> {
        let Some(n) = item.as_integer() else {
            return Err(self.error(
                item,
                key,
                &format!("expected an integer, found {}", type_name(item)),
            ));
        };
        u16::try_from(n)
            .ok()
            .filter(|&p| p >= min)
            .ok_or_else(|| self.error(item, key, &format!("{n} is not from {min} to 65535")))
    }

    /// An age (`7d`, `12h`, `2w`, `0`), or a whole number of days.
    pub fn age(&self, item: &Item, key: &str) -> Result<std::time::Duration, String> {
        if let Some(n) = item.as_integer() {
            return u64::try_from(n)
                .map(|d| std::time::Duration::from_secs(d * 86_400))
                .map_err(|_| self.error(item, key, &format!("{n} is not a number of days")));
        }
        let s = self.string(item, key)?;
        crate::duration::parse_age(&s).map_err(|e| self.error(item, key, &e))
    }

    /// A number of bytes: an integer, or a string with a unit (`500MiB`, `10GB`, `0`).
    pub fn size(&self, item: &Item, key: &str) -> Result<u64, String> {
        if let Some(n) = item.as_integer() {
            return u64::try_from(n)
                .map_err(|_| self.error(item, key, &format!("{n} is not a number of bytes")));
        }
        let s = self.string(item, key)?;
        crate::duration::parse_size(&s).map_err(|e| self.error(item, key, &e))
    }

    pub fn table<'i>(&self, item: &'i Item, key: &str) -> Result<&'i dyn TableLike, String> {
        item.as_table_like().ok_or_else(|| {
            self.error(
                item,
                key,
                &format!("expected a table, found {}", type_name(item)),
            )
        })
    }
}

/// A human name for the TOML type of `item`.
pub fn type_name(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => match v {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a datetime",
            Value::Array(_) => "an array",
            Value::InlineTable(_) => "a table",
        },
    }
}
