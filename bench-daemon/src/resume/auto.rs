//! The daemon's own resume, on restart, of a run its death interrupted (`[queue] auto_resume =
//! true`): only once the drive reads healthy (no fault) and disabled. A run ended by a limit, an
//! e-stop, a drive or a device fault is never resumed without an operator.

use crate::config::Loaded;
use crate::control::connect::connect_drive;
use std::time::Duration;

/// How long the daemon waits for the drive to read healthy and disabled.
pub const DRIVE_WAIT: Duration = Duration::from_secs(30);
/// Between two reads of the drive.
const POLL: Duration = Duration::from_millis(250);

/// Waits until the drive reads healthy and disabled (at most [`DRIVE_WAIT`]); the answer
/// says what it read, for the run log, or why the run is not resumed.
pub async fn drive_ready(loaded: &Loaded) -> Result<String, String> {
    let deadline = tokio::time::Instant::now() + DRIVE_WAIT;
    loop {
        let why = match read_once(loaded).await {
            Ok(read) => return Ok(read),
            Err(why) => why,
        };
        if tokio::time::Instant::now() + POLL > deadline {
            return Err(format!(
                "the drive did not read healthy and disabled within {} s: {why}",
                DRIVE_WAIT.as_secs()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn read_once(loaded: &Loaded) -> Result<String, String> {
    let mut drive = connect_drive(loaded).await.map_err(|e| e.to_string())?;
    let fb = drive
        .read_feedback()
        .await
        .map_err(|e| format!("drive: {e}"))?;
    let status = fb.status.map_or("-".into(), |s| format!("{s:#06x}"));
    if fb.fault == Some(true) {
        return Err(format!(
            "drive fault (status {status}, code {})",
            fb.fault_code.unwrap_or(0)
        ));
    }
    match fb.enabled {
        Some(true) => Err(format!("the drive reads enabled (status {status})")),
        Some(false) => Ok(format!("drive read healthy and disabled (status {status})")),
        None => Err(
            "the drive profile has no `enabled` status pattern: its state cannot be read".into(),
        ),
    }
}
