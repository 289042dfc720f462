//! The litmus v1 front end: source text to a spanned syntax tree.
//!
//! [`parse`] never panics and never stops at the first error: it returns the
//! tree it could build together with every [`Diagnostic`] of the file. The
//! grammar is described in `docs/litmus.md`; this crate knows nothing of
//! models or semantics (the graph crate checks names and model support).

pub mod ast;
pub mod diagnostic;
pub mod kinds;
pub mod lexer;
pub mod parser;
pub mod source;

pub use ast::*;
pub use diagnostic::{Diagnostic, Severity};
pub use kinds::{FindingKind, KindSet, UbKind};
pub use parser::{parse, MAX_NESTING};
pub use source::{LineCol, SourceFile, Span};
