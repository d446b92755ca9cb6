//! The daemon's own resume, on restart, of a run its death interrupted (`[queue] auto_resume`).
