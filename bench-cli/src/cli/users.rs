//! `bench users add NAME --role R --config bench.toml` and `bench users list --config
//! bench.toml`: who may use `bench serve` (docs/src/lab.md#who-did-what). `add` appends a
//! `[[users]]` entry with the Argon2id hash of a new random token and prints the token once:
//! bench.toml never holds it.

use super::InputError;
use bench_daemon::config::BenchConfig;
use bench_daemon::users::{Role, check_name, hash_token, new_token};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `bench users ...`.
#[derive(Debug, clap::Subcommand)]
pub enum UsersCommand {
    /// Add a user with a new token (printed once; bench.toml keeps only its hash).
    Add(AddArgs),
    /// List the users of a bench.toml (names and roles).
    List(ListArgs),
}

/// Arguments of `bench users add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The user's name: letters, digits, '.', '_', '-' (at most 64).
    name: String,
    /// viewer (reads), operator (runs, stops, schedules, e-stop reset, fits, tags and notes)
    /// or admin (also clears latched faults and reads the audit log).
    #[arg(long, value_enum)]
    role: Role,
    /// The bench.toml to add the user to.
    #[arg(long)]
    config: PathBuf,
    /// Print `{name, role, token}` as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bench users list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The bench.toml.
    #[arg(long)]
    config: PathBuf,
    /// Print `[{name, role}]` as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `bench users ...`.
pub fn run(cmd: &UsersCommand) -> anyhow::Result<()> {
    match cmd {
        UsersCommand::Add(args) => add(args),
        UsersCommand::List(args) => list(args),
    }
}

fn read(path: &Path) -> anyhow::Result<(String, BenchConfig)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("--config: cannot read {}: {e}", path.display())))?;
    let config = BenchConfig::parse(&text, &path.display().to_string())?;
    Ok((text, config))
}

fn add(args: &AddArgs) -> anyhow::Result<()> {
    check_name(&args.name).map_err(|e| InputError(format!("NAME: {e}")))?;
    let (text, config) = read(&args.config)?;
    if config.users.iter().any(|u| u.name == args.name) {
        return Err(InputError(format!(
            "{}: a user {:?} exists already: choose another name",
            args.config.display(),
            args.name
        ))
        .into());
    }
    let token = new_token()?;
    let entry = format!(
        "\n[[users]]\nname = \"{}\"\nrole = \"{}\"\ntoken_hash = \"{}\"\n",
        args.name,
        args.role,
        hash_token(&token)?
    );
    let sep = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    let new_text = format!("{text}{sep}{entry}");
    // The file as it will be must load; nothing is written otherwise.
    BenchConfig::parse(&new_text, &args.config.display().to_string())?;
    replace(&args.config, &new_text)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({"name": args.name, "role": args.role, "token": token});
        writeln!(w, "{v}")?;
    } else {
        writeln!(
            w,
            "added {} ({}) to {}\ntoken (shown once: keep it, bench.toml holds only its hash):\n{token}",
            args.name,
            args.role,
            args.config.display()
        )?;
    }
    Ok(())
}

/// Replaces `path`'s contents with `text` at once (a file beside it renamed over it), keeping
/// its permissions.
fn replace(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    std::fs::set_permissions(tmp.path(), std::fs::metadata(path)?.permissions())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let (_, config) = read(&args.config)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        let v: Vec<_> = config
            .users
            .iter()
            .map(|u| serde_json::json!({"name": u.name, "role": u.role}))
            .collect();
        writeln!(w, "{}", serde_json::Value::Array(v))?;
        return Ok(());
    }
    if config.users.is_empty() {
        writeln!(w, "no users in {}", args.config.display())?;
    }
    for u in &config.users {
        writeln!(w, "{:<24} {}", u.name, u.role)?;
    }
    Ok(())
}
