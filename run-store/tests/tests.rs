//! Integration tests of the run store, by theme, on real SQLite files in temp dirs.

mod annotations;
mod archive;
mod campaigns;
mod chain;
mod export;
mod fleet;
mod imports;
mod push;
mod queries;
mod reasons;
mod recorder;
mod recovery;
mod run_log;
mod sensors;
mod trends;
mod util;
