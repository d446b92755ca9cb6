//! Who may do what on `bench serve`: the `[[users]]` of bench.toml (a name, a role and the
//! Argon2id hash of a token, never the token itself) and the check of a bearer token against
//! them. An Argon2 verification is slow on purpose (tens of milliseconds), so a token once
//! verified is remembered by its SHA-256 for the daemon's lifetime: each request after the
//! first costs one hash and one map lookup.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Longest user name \[characters\].
pub const MAX_NAME_CHARS: usize = 64;
/// Characters of a token `bench users add` makes (base64url of 32 random bytes).
pub const TOKEN_CHARS: usize = 43;
/// Unknown tokens remembered as refused before the memory is cleared (bounds a flood).
const MAX_REFUSED: usize = 4096;

/// What a user may do; each role may do what the ones before it may.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads: runs, results, samples, the queue, the live stream.
    Viewer,
    /// Runs, stops, schedules, resets the e-stop, fits, tags and notes.
    Operator,
    /// Clears latched faults and reads the audit log.
    Admin,
}

impl Role {
    /// `viewer`, `operator` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `[[users]]` entry of bench.toml.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// Letters, digits, `.`, `_`, `-`, at most 64 characters; unique.
    pub name: String,
    /// `viewer`, `operator` or `admin`.
    pub role: Role,
    /// The token's Argon2id hash as a PHC string (`$argon2id$v=19$...`), as `bench users add`
    /// writes it.
    pub token_hash: String,
}

/// Refuses a user name that is empty, too long or has characters beyond letters, digits and
/// `._-`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(ok) {
        return Err(format!(
            "name = {name:?}: give 1 to {MAX_NAME_CHARS} letters, digits, '.', '_' or '-'"
        ));
    }
    Ok(())
}

/// Checks every entry (names, uniqueness, hashes) before a daemon trusts them; the message
/// names the entry.
pub fn check_users(users: &[UserConfig]) -> Result<(), String> {
    for (i, u) in users.iter().enumerate() {
        let at = format!("[[users]] #{} ({})", i + 1, u.name);
        check_name(&u.name).map_err(|e| format!("{at}: {e}"))?;
        if users[..i].iter().any(|o| o.name == u.name) {
            return Err(format!("{at}: the name is given twice"));
        }
        let hash = PasswordHash::new(&u.token_hash)
            .map_err(|e| format!("{at}: token_hash is not a PHC string ({e})"))?;
        if hash.algorithm.as_str() != "argon2id" {
            return Err(format!(
                "{at}: token_hash uses {}: give an Argon2id hash (bench users add makes one)",
                hash.algorithm
            ));
        }
    }
    Ok(())
}

/// A new random token (32 bytes from the OS, base64url without padding).
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random bytes from the OS: {e}"))?;
    Ok(base64url(&bytes))
}

fn base64url(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 1);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for k in 0..=chunk.len() {
            out.push(ABC[((n >> (18 - 6 * k)) & 63) as usize] as char);
        }
    }
    out
}

/// The Argon2id PHC string of `token` (default parameters, a random salt).
pub fn hash_token(token: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| anyhow::anyhow!("no random bytes from the OS: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("salt: {e}"))?;
    let hash = Argon2::default()
        .hash_password(token.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("hashing the token: {e}"))?;
    Ok(hash.to_string())
}

/// Whether `token` is the one `phc` was made from.
pub fn verify(token: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| {
        Argon2::default()
            .verify_password(token.as_bytes(), &h)
            .is_ok()
    })
}

/// A user a token was verified as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The name.
    pub name: Arc<str>,
    /// The role.
    pub role: Role,
}

/// The configured users and the tokens verified so far.
#[derive(Debug)]
pub struct Users {
    list: Vec<UserConfig>,
    /// SHA-256 of a token → the user it was verified as (`None`: it matched nobody).
    seen: Mutex<HashMap<[u8; 32], Option<User>>>,
}

impl Users {
    /// The users of a checked configuration.
    pub fn new(list: Vec<UserConfig>) -> Users {
        Users {
            list,
            seen: Mutex::default(),
        }
    }

    /// The user `token` belongs to, if any: from memory, else by Argon2 verification against
    /// each entry (on a blocking thread: it takes tens of milliseconds).
    pub async fn identify(self: &Arc<Self>, token: &str) -> Option<User> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.lock().get(&key) {
            return known.clone();
        }
        let (me, token) = (self.clone(), token.to_string());
        let found = tokio::task::spawn_blocking(move || me.verify_all(&token))
            .await
            .ok()
            .flatten();
        let mut seen = self.lock();
        if found.is_none() && seen.len() >= MAX_REFUSED {
            seen.retain(|_, u| u.is_some());
        }
        seen.insert(key, found.clone());
        found
    }

    fn verify_all(&self, token: &str) -> Option<User> {
        self.list
            .iter()
            .find(|u| verify(token, &u.token_hash))
            .map(|u| User {
                name: Arc::from(u.name.as_str()),
                role: u.role,
            })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Option<User>>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_against_its_own_hash_only() {
        let token = new_token().unwrap();
        assert_eq!(token.len(), TOKEN_CHARS);
        assert_ne!(token, new_token().unwrap());
        let phc = hash_token(&token).unwrap();
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        assert!(verify(&token, &phc));
        assert!(!verify("not the token", &phc));
        let users = [UserConfig {
            name: "ada".into(),
            role: Role::Admin,
            token_hash: phc,
        }];
        assert!(check_users(&users).is_ok());
        let twice = [users[0].clone(), users[0].clone()];
        assert!(check_users(&twice).unwrap_err().contains("twice"));
        let plain = [UserConfig {
            token_hash: "s3cret".into(),
            ..users[0].clone()
        }];
        assert!(check_users(&plain).unwrap_err().contains("PHC"));
        assert!(check_name("two words").is_err() && check_name("").is_err());
    }

    #[test]
    fn base64url_matches_the_rfc_4648_vectors() {
        assert_eq!(base64url(b"foob"), "Zm9vYg");
        assert_eq!(base64url(b"fooba"), "Zm9vYmE");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn roles_are_ordered_by_what_they_may_do() {
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
    }
}
