//! Holding verdicts against real GPUs (issue #17): emit a self-contained
//! CUDA program per CUDA-model litmus test (`emit`), read what runs of those
//! programs observed (`observed`, a versioned wire module), and compare the
//! observations with the outcome sets the model allows (`compare`).
//! I/O-free: the cli crate writes files and runs processes.

pub mod compare;
pub mod emit;
pub mod observed;
pub mod runner;
