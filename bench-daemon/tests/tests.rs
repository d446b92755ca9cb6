//! Integration tests of the `bench` binary, by theme.

mod cli_compare;
mod cli_fit;
mod cli_fit_runs;
mod cli_import;
mod cli_models;
mod cli_run;
mod cli_runs;
mod cli_serve;
mod cli_shell;
mod cli_sim;
mod compensation;
mod devices;
mod estop_shapes;
mod fault_table;
mod fit_quality;
mod import_rest;
mod lab;
mod perf_loop;
mod resume;
mod resume_serve;
mod sensors;
mod serve_hardening;
mod serve_users;
mod streamed_exports;
mod truth;
mod util;
