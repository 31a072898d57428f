//! Fixtures shared by the integration-test binaries of `overtone` (`physics`, `rig_and_io`),
//! each of which includes this folder with `#[path = "../common/mod.rs"] mod common;`.
//! A binary uses only part of it, hence `dead_code` is allowed here.
#![allow(dead_code)]

pub mod refinement;
