//! Number parsing shared by the trace readers: the model's parsers, whose
//! messages say what is wrong with a token (the caller adds the file, line
//! and field).

pub(crate) use coflowkit_model::parse::{nonneg_real, scaled, uint, uint32};
