//! The host contract's settings, declared once ([`table`]) with what each means ([`spec`]),
//! and their translation into the solvers' parameters ([`deformer_params`]).

mod deformer_params;
pub mod spec;
mod table;

pub(crate) use deformer_params::DeformerParams;
pub use spec::{Base, ChoiceSpec, Group, Kind, SettingValue, Solver, Spec, Value};
pub use table::{spec, Settings, SETTINGS};
