//! Secrets: API tokens, sign-in links and session cookies are 256 random
//! bits from the operating system. Only their SHA-256 digests are stored;
//! a slow password hash adds nothing for secrets nobody can guess.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What every API token starts with, so a leaked one is recognisable (and
/// secret scanners can be told about it).
pub const TOKEN_PREFIX: &str = "kr_";

/// A new secret: 32 random bytes, hex-encoded, after `prefix`.
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    // The OS random source failing is not something to recover from: no
    // secret is better than a guessable one.
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    format!("{prefix}{}", hex::encode(bytes))
}

/// The stored form of a secret.
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Compares two strings in time that depends only on their lengths.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// A session's CSRF token, derived from the session secret (so it needs no
/// storage): the page reads it, a cross-site page cannot.
pub fn csrf_of(session_secret: &str) -> String {
    digest(&format!("csrf\0{session_secret}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_distinct_and_digested() {
        let a = generate(TOKEN_PREFIX);
        let b = generate(TOKEN_PREFIX);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 64);
        assert_ne!(a, b);
        assert_eq!(digest(&a), digest(&a));
        assert_ne!(digest(&a), digest(&b));
        assert!(!digest(&a).contains(&a[3..]));
        assert!(same(&a, &a.clone()));
        assert!(!same(&a, &b));
        assert!(!same(&a, &a[..10]));
        assert_ne!(csrf_of(&a), digest(&a));
    }
}
