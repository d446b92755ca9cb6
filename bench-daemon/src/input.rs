//! Bad input from the user, the one error kind every front end (the command line, the REST
//! API) reports as the user's to fix: the CLI exits with code 2, the service answers 422.

/// Bad input (unknown model, bad parameter, bad scenario, a database that is not there): its
/// text names the field, flag or file and the rule broken.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);
