//! Rigs: linear blend skinning.

mod lbs;

pub use lbs::{LbsRig, NEGATIVE_WEIGHT_TOLERANCE, WEIGHT_SUM_TOLERANCE};
