//! `bench`: the frictionbench command line.
//!
//! Parses the command line and hands each subcommand to its module in `cli/`. Errors are printed
//! as one line (`bench: ...`, the whole cause chain); bad input exits with code 2.

mod cli;
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// frictionbench: friction test bench controller, simulator and model library.
#[derive(Debug, Parser)]
#[command(name = "bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every friction model with its parameters (name, unit, default) and description.
    Models(cli::models::ModelsArgs),
    /// Run one friction model in a scenario and print the trajectory (CSV or JSON).
    Simulate(cli::simulate::SimulateArgs),
    /// Read every readable signal of a device and print JSON lines in SI units.
    Probe(cli::probe::ProbeArgs),
    /// Fit a model's parameters to recorded data with one identification procedure.
    Fit(cli::fit::FitArgs),
    /// Fit every chosen model on estimation runs and print the MSE table per regime.
    Compare(cli::compare::CompareArgs),
    /// Benchmarks that print figures.
    #[command(subcommand)]
    Perf(cli::perf::PerfCommand),
    /// Stored runs: list, show (status, timing, results), export (CSV, JSON or Parquet).
    #[command(subcommand)]
    Runs(cli::runs::RunsCommand),
    /// Run one experiment on the bench (or the simulated one) and record it.
    Run(cli::run::RunArgs),
    /// A characterisation campaign: breakaway, low-speed check, sweep, presliding, validation,
    /// fits, comparison and compensation trial, each step designed from the last; stored.
    Characterise(cli::characterise::CharacteriseArgs),
    /// Write a campaign's report: one self-contained HTML file (or PDF through Chromium).
    Report(cli::report::ReportArgs),
    /// Stored parameter sets (fitted or given): list, show.
    #[command(subcommand)]
    Params(cli::params::ParamsCommand),
    /// Run the simulated bench (Modbus TCP and/or RTU on a pty) until Ctrl-C.
    Sim(cli::sim::SimArgs),
    /// Press a running daemon's e-stop (`POST /api/estop`) and wait for the drive's confirmation.
    Estop(cli::estop::EstopArgs),
    /// Clear a latched drive fault (an operator's action after checking the bench).
    FaultReset(cli::fault_reset::FaultResetArgs),
    /// Who may use `bench serve`: add a user (token printed once), list them.
    #[command(subcommand)]
    Users(cli::users::UsersCommand),
    /// The torque sensors' calibration records: calibrate, list (with the zero's drift).
    #[command(subcommand)]
    Sensors(cli::sensors::SensorsCommand),
    /// Who did what: the audit log of every mutating request, newest first.
    Audit(cli::audit::AuditArgs),
    /// One parameter over many runs: a point per fitted run with its standard error, control
    /// limits from a baseline and the points outside them flagged.
    Trends(cli::trends::TrendsArgs),
    /// Move the raw samples of old runs into hive-partitioned Parquet files (the runs stay
    /// listed; their samples are read from the files).
    Archive(cli::archive::ArchiveArgs),
    /// Serve the bench over REST (queue, schedule, live stream, dashboard) until Ctrl-C.
    Serve(cli::serve::ServeArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cli::shell::CompletionsArgs),
    /// Print the man page (roff), or write one per subcommand with --out DIR.
    Man(cli::shell::ManArgs),
}

/// A panic in a control-loop thread prints one line and no backtrace: the loop catches it and
/// runs the safe-state sequence next, which must not wait for a backtrace to be symbolised
/// (that can outlast the drive's communication watchdog). Other threads keep the default hook.
fn quick_loop_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let loop_thread = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("control-loop"));
        if loop_thread {
            eprintln!("bench: {info} (caught: the drive's safe state follows)");
        } else if closed_stdout(&info.to_string()) {
            // `bench models | head`: the reader has all it wanted.
            std::process::exit(0);
        } else {
            default(info);
        }
    }));
}

/// Whether a panic or error is a write to a standard output whose reader has gone.
fn closed_stdout(message: &str) -> bool {
    message.contains("failed printing to stdout") && message.contains("Broken pipe")
}

/// Whether `err` is, anywhere in its chain, a write into a closed pipe.
fn broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    quick_loop_panics();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Models(args) => cli::models::run(&args),
        Command::Simulate(args) => cli::simulate::run(&args),
        Command::Perf(cmd) => cli::perf::run(&cmd),
        Command::Runs(cmd) => cli::runs::run(&cmd),
        Command::Sim(args) => cli::sim::run(&args),
        Command::Run(args) => cli::run::run(&args),
        Command::Characterise(args) => cli::characterise::run(&args),
        Command::Report(args) => cli::report::run(&args),
        Command::Probe(args) => cli::block_on(cli::probe::run(args)),
        Command::Fit(args) => cli::fit::run(&args),
        Command::Compare(args) => cli::compare::run(&args),
        Command::Params(cmd) => cli::params::run(&cmd),
        Command::Serve(args) => cli::serve::run(&args),
        Command::FaultReset(args) => cli::fault_reset::run(&args),
        Command::Estop(args) => cli::estop::run(&args),
        Command::Audit(args) => cli::audit::run(&args),
        Command::Trends(args) => cli::trends::run(&args),
        Command::Archive(args) => cli::archive::run(&args),
        Command::Users(cmd) => cli::users::run(&cmd),
        Command::Sensors(cmd) => cli::sensors::run(&cmd),
        Command::Completions(args) => cli::shell::completions(&args, Cli::command()),
        Command::Man(args) => cli::shell::man(&args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bench: {err:#}");
            if err.downcast_ref::<bench_daemon::InputError>().is_some() {
                ExitCode::from(2)
            } else if err
                .downcast_ref::<cli::run::RunNotCompleted>()
                .is_some_and(|e| e.status == run_store::RunStatus::Aborted)
                || err
                    .downcast_ref::<campaign::StepFailed>()
                    .is_some_and(|e| e.aborted)
            {
                ExitCode::from(3)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
