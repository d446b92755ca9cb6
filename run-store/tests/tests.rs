//! Integration tests of the run store, by theme, on real SQLite files in temp dirs.

mod annotations;
mod export;
mod push;
mod queries;
mod recorder;
mod recovery;
mod util;
