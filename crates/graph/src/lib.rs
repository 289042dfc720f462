//! The operation graph: a litmus syntax tree lowered to concrete threads,
//! barrier-object and location instances, and one control-flow graph per
//! thread body (loops stay loops: nothing is unrolled). Also defines the
//! [`Execution`] that the explorer builds and the rule checker judges.
//!
//! Everything here is I/O-free; ids are `u32` newtypes indexing the
//! program's tables.

pub mod bits;
pub mod classes;
pub mod copies;
pub mod dot;
pub mod execution;
pub mod ids;
pub mod lower;
pub mod observe;
pub mod place_regs;
pub mod program;

pub use execution::*;
pub use ids::*;
pub use lower::lower;
pub use observe::Observable;
pub use program::*;
