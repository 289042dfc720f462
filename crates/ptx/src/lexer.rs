//! PTX tokens with byte spans. Names cover registers (`%r1`), special
//! registers with their component (`%tid.x`), directives (`.reg`), dotted
//! opcodes (`ld.global.f32`, `ld.shared::cta.u32`), labels (`$L__BB0_2`)
//! and symbols; comments
//! (`//`, `/* */`) are skipped. A character the lexer does not know is an
//! error token, never a panic.

use bc_syntax::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    Int(i64),
    /// A floating-point literal (`0f3F800000`, `1.5`): its value is never
    /// needed, only that it is one.
    Float,
    Str(String),
    Punct(char),
    /// A character or literal the lexer cannot read, with why.
    Bad(String),
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// A newline separates this token from the one before (directives such
    /// as `.loc` end at the end of their line).
    pub line_start: bool,
}

fn name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%' | '.')
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.')
}

/// The tokens of `text`.
pub fn lex(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i] as char;
        if c == '\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if text[i..].starts_with("/*") {
            match text[i + 2..].find("*/") {
                Some(k) => {
                    if text[i..i + 2 + k].contains('\n') {
                        line_start = true;
                    }
                    i += k + 4;
                }
                None => {
                    out.push(Token {
                        tok: Tok::Bad("a comment that never ends".into()),
                        span: Span::new(i, i + 2),
                        line_start,
                    });
                    i = b.len();
                }
            }
            continue;
        }
        let start = i;
        let tok = if name_start(c) {
            i += 1;
            loop {
                if i < b.len() && name_char(b[i] as char) {
                    i += 1;
                } else if text[i..].starts_with("::") && text[i + 2..].starts_with(|c: char| c.is_ascii_alphabetic()) {
                    // `.shared::cta`, `ld.shared::cluster`: one name.
                    i += 2;
                } else {
                    break;
                }
            }
            Tok::Name(text[start..i].to_string())
        } else if c.is_ascii_digit() {
            number(text, &mut i)
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            if i < b.len() && b[i] == b'"' {
                i += 1;
                Tok::Str(text[start + 1..i - 1].to_string())
            } else {
                Tok::Bad("a string that does not end on its line".into())
            }
        } else if "{}[]()<>,;:+-!@|=".contains(c) {
            i += 1;
            Tok::Punct(c)
        } else {
            // Step over the whole character (it may be several bytes).
            i += text[i..].chars().next().map_or(1, |ch| ch.len_utf8());
            Tok::Bad(format!("unexpected character `{}`", &text[start..i]))
        };
        out.push(Token {
            tok,
            span: Span::new(start, i),
            line_start,
        });
        line_start = false;
    }
    out
}

/// An integer (decimal, `0x` hex, `0b` binary, octal with a leading 0,
/// an optional `U` suffix) or a float (`0f`/`0d` hex bits, or decimal
/// with a point or an exponent).
fn number(text: &str, i: &mut usize) -> Tok {
    let b = text.as_bytes();
    let start = *i;
    let rest = &text[start..];
    let hexfloat = rest.len() > 2 && matches!(&rest[..2], "0f" | "0F" | "0d" | "0D");
    let (radix, digits_from) = if rest.starts_with("0x") || rest.starts_with("0X") {
        (16, start + 2)
    } else if rest.starts_with("0b") || rest.starts_with("0B") {
        (2, start + 2)
    } else if hexfloat {
        *i = start + 2;
        while *i < b.len() && (b[*i] as char).is_ascii_hexdigit() {
            *i += 1;
        }
        return Tok::Float;
    } else {
        (10, start)
    };
    *i = digits_from;
    while *i < b.len()
        && (if radix == 16 {
            (b[*i] as char).is_ascii_hexdigit()
        } else {
            (b[*i] as char).is_ascii_digit()
        })
    {
        *i += 1;
    }
    if radix == 10 && *i < b.len() && (b[*i] == b'.' || b[*i] == b'e' || b[*i] == b'E') {
        *i += 1;
        if *i < b.len() && (b[*i] == b'+' || b[*i] == b'-') {
            *i += 1;
        }
        while *i < b.len() && (b[*i] as char).is_ascii_digit() {
            *i += 1;
        }
        return Tok::Float;
    }
    let digits = &text[digits_from..*i];
    if *i < b.len() && (b[*i] == b'U' || b[*i] == b'u') {
        *i += 1;
    }
    let (radix, digits) = if radix == 10 && digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (radix, digits)
    };
    match u64::from_str_radix(digits, radix) {
        Ok(v) => Tok::Int(v as i64),
        Err(_) => Tok::Bad(format!("`{}` is not a number PTX allows here", &text[start..*i])),
    }
}
