//! Byte spans and the mapping from byte offsets to 1-based line and column.

/// A half-open byte range `start..end` into one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// One litmus file's name and text, with a line index.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
    /// The file this text was generated from, where there is one (nvcc's
    /// PTX of a `.cu` file): reports that point into files, such as SARIF,
    /// point there.
    pub origin: Option<std::sync::Arc<Origin>>,
}

/// The source a generated text came from, and which line of it each part
/// of the generated text stands for (for PTX: its `.loc` lines).
#[derive(Clone, Debug)]
pub struct Origin {
    pub source: SourceFile,
    /// `(offset in the generated text, line, column)` from that offset on,
    /// sorted by offset; line 0: no line of the source.
    pub marks: Vec<(u32, u32, u32)>,
}

impl Origin {
    /// The line and column of the source that the generated text at
    /// `offset` stands for (the column is 1 where none is known).
    pub fn at(&self, offset: u32) -> Option<LineCol> {
        let i = self.marks.partition_point(|m| m.0 <= offset);
        let &(_, line, col) = self.marks.get(i.checked_sub(1)?)?;
        (line > 0).then_some(LineCol { line, col: col.max(1) })
    }
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.char_indices().filter(|&(_, c)| c == '\n').map(|(i, _)| i + 1));
        SourceFile {
            origin: None,
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = (offset as usize).min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() + 1;
        LineCol {
            line: line as u32 + 1,
            col: col as u32,
        }
    }

    /// Where a span starts and where it ends (the position just past its
    /// last character; a reversed span ends where it starts).
    pub fn range(&self, span: Span) -> (LineCol, LineCol) {
        (self.line_col(span.start), self.line_col(span.end.max(span.start)))
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: u32) -> &str {
        let i = (line as usize).saturating_sub(1).min(self.line_starts.len() - 1);
        let start = self.line_starts[i];
        let end = self.line_starts.get(i + 1).map_or(self.text.len(), |&e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    pub fn snippet(&self, span: Span) -> &str {
        let s = (span.start as usize).min(self.text.len());
        let e = (span.end as usize).clamp(s, self.text.len());
        self.text.get(s..e).unwrap_or("")
    }
}
