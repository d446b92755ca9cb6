//! The signals that end a command which can move a drive.

/// Waits for SIGINT, SIGTERM or SIGHUP (the ways a terminal, systemd or a closed SSH session
/// end a process) and names it: every command that can move a drive aborts its run into the
/// safe state on any of them.
pub async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        let _ = tokio::signal::ctrl_c().await;
        return "SIGINT";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    }
}
