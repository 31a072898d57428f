//! Reproductions of the seed documents' experiments, as library functions so that tests and
//! examples run the same code.

pub mod cantilever;
