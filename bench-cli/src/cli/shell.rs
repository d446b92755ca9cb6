//! `bench completions SHELL` and `bench man`: what a package or an installer puts next to the
//! binary (shell completion scripts, man pages), generated from the command line's definition so
//! they never drift from it.

use super::InputError;
use std::path::PathBuf;

/// Arguments of `bench completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Arguments of `bench man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write `bench.1` and one page per subcommand (`bench-runs-export.1`, ...) into DIR
    /// instead of printing `bench.1` to standard output.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Prints the completion script of `cmd` for the shell.
pub fn completions(args: &CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    let name = cmd.get_name().to_string();
    clap_complete::generate(args.shell, &mut cmd, name, &mut std::io::stdout());
    Ok(())
}

/// Prints `bench.1`, or writes every page into `--out`.
pub fn man(args: &ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    match &args.out {
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| InputError(format!("--out: cannot create {}: {e}", dir.display())))?;
            clap_mangen::generate_to(cmd, dir)?;
        }
    }
    Ok(())
}
