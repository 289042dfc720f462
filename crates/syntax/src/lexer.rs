//! Hand-written lexer: text to tokens with byte spans. Bad characters become
//! diagnostics and are skipped, so lexing always reaches the end of the file.

use crate::diagnostic::Diagnostic;
use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    /// A newline or `;`: the end of a statement.
    Newline,
    LBrace,
    RBrace,
    LParen,
    RParen,
    /// `[` and `]`: barrier arrays (`barrier full[4]`, `full[s]`).
    LBracket,
    RBracket,
    Comma,
    Colon,
    /// `=` (assignment and attributes).
    Assign,
    Op(Op),
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Not,
    /// Bitwise operators (masks): `&`, `|`, `^`, `<<`, `>>`.
    BitAnd,
    BitOr,
    Xor,
    Shl,
    Shr,
}

impl Op {
    pub fn text(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::And => "&&",
            Op::Or => "||",
            Op::Not => "!",
            Op::BitAnd => "&",
            Op::BitOr => "|",
            Op::Xor => "^",
            Op::Shl => "<<",
            Op::Shr => ">>",
        }
    }
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(i) => format!("integer `{i}`"),
            Tok::Str(_) => "a string".into(),
            Tok::Newline => "end of statement".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Colon => "`:`".into(),
            Tok::Assign => "`=`".into(),
            Tok::Op(o) => format!("`{}`", o.text()),
            Tok::Eof => "end of file".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Splits `text` into tokens; always ends with one `Eof` token.
pub fn lex(text: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut chars = text.char_indices().peekable();
    // The run of unexpected characters that ends where the next one would
    // start: (its diagnostic's index, how many, the first one as shown).
    // A run gives one diagnostic, not one per character.
    let mut bad_run: Option<(usize, usize, String)> = None;
    while let Some(&(i, c)) = chars.peek() {
        let single = |tok: Tok| Token {
            tok,
            span: Span::new(i, i + c.len_utf8()),
        };
        match c {
            ' ' | '\t' | '\r' => {
                chars.next();
            }
            '\n' | ';' => {
                chars.next();
                out.push(single(Tok::Newline));
            }
            '#' => {
                while chars.peek().is_some_and(|&(_, c)| c != '\n') {
                    chars.next();
                }
            }
            '/' if bytes.get(i + 1) == Some(&b'/') => {
                while chars.peek().is_some_and(|&(_, c)| c != '\n') {
                    chars.next();
                }
            }
            '"' => {
                chars.next();
                let mut s = String::new();
                let mut end = text.len();
                let mut closed = false;
                while let Some((j, c)) = chars.next() {
                    match c {
                        '"' => {
                            end = j + 1;
                            closed = true;
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, e @ ('"' | '\\'))) => s.push(e),
                            Some((k, e)) => {
                                diags.push(Diagnostic::error(
                                    Span::new(j, k + e.len_utf8()),
                                    format!("unknown escape `\\{e}` (only `\\\"` and `\\\\`)"),
                                ));
                            }
                            None => {}
                        },
                        '\n' => {
                            end = j;
                            break;
                        }
                        c => s.push(c),
                    }
                }
                if !closed {
                    diags.push(Diagnostic::error(Span::new(i, end), "unterminated string"));
                }
                out.push(Token {
                    tok: Tok::Str(s),
                    span: Span::new(i, end),
                });
            }
            c if c.is_ascii_digit() => {
                let mut end = i;
                while let Some(&(j, c)) = chars.peek() {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        end = j + 1;
                        chars.next();
                    } else {
                        break;
                    }
                }
                let word = &text[i..end];
                let parsed = if let Some(hex) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                    i64::from_str_radix(hex, 16).ok()
                } else {
                    word.parse::<i64>().ok()
                };
                let span = Span::new(i, end);
                match parsed {
                    Some(v) => out.push(Token { tok: Tok::Int(v), span }),
                    None => {
                        diags.push(Diagnostic::error(span, format!("invalid integer `{word}`")));
                        out.push(Token { tok: Tok::Int(0), span });
                    }
                }
            }
            c if is_ident_start(c) => {
                let mut end = i;
                while let Some(&(j, c)) = chars.peek() {
                    if is_ident_continue(c) {
                        end = j + 1;
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Token {
                    tok: Tok::Ident(text[i..end].to_string()),
                    span: Span::new(i, end),
                });
            }
            _ => {
                chars.next();
                let next = chars.peek().map(|&(_, c)| c);
                let two = |op: Op| Token {
                    tok: Tok::Op(op),
                    span: Span::new(i, i + 2),
                };
                let tok = match (c, next) {
                    ('=', Some('=')) => Some(two(Op::Eq)),
                    ('!', Some('=')) => Some(two(Op::Ne)),
                    ('<', Some('=')) => Some(two(Op::Le)),
                    ('>', Some('=')) => Some(two(Op::Ge)),
                    ('&', Some('&')) => Some(two(Op::And)),
                    ('|', Some('|')) => Some(two(Op::Or)),
                    ('<', Some('<')) => Some(two(Op::Shl)),
                    ('>', Some('>')) => Some(two(Op::Shr)),
                    _ => None,
                };
                if let Some(tok) = tok {
                    chars.next();
                    out.push(tok);
                    continue;
                }
                let tok = match c {
                    '{' => Tok::LBrace,
                    '}' => Tok::RBrace,
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '[' => Tok::LBracket,
                    ']' => Tok::RBracket,
                    ',' => Tok::Comma,
                    ':' => Tok::Colon,
                    '=' => Tok::Assign,
                    '+' => Tok::Op(Op::Add),
                    '-' => Tok::Op(Op::Sub),
                    '*' => Tok::Op(Op::Mul),
                    '/' => Tok::Op(Op::Div),
                    '%' => Tok::Op(Op::Rem),
                    '<' => Tok::Op(Op::Lt),
                    '>' => Tok::Op(Op::Gt),
                    '!' => Tok::Op(Op::Not),
                    '&' => Tok::Op(Op::BitAnd),
                    '|' => Tok::Op(Op::BitOr),
                    '^' => Tok::Op(Op::Xor),
                    _ => {
                        let shown = if c.is_control() || c == '\u{fffd}' {
                            format!("{:?}", c)
                        } else {
                            format!("`{c}`")
                        };
                        let span = single(Tok::Eof).span;
                        match &mut bad_run {
                            Some((k, n, first)) if diags[*k].span.is_some_and(|s| s.end == span.start) => {
                                *n += 1;
                                let d = &mut diags[*k];
                                d.span = d.span.map(|s| Span { end: span.end, ..s });
                                d.message = format!("{n} unexpected characters in a row, the first {first}");
                            }
                            _ => {
                                bad_run = Some((diags.len(), 1, shown.clone()));
                                diags.push(Diagnostic::error(span, format!("unexpected character {shown}")));
                            }
                        }
                        continue;
                    }
                };
                out.push(single(tok));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(text.len(), text.len()),
    });
    out
}
