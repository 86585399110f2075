//! The delivery signature (pure): HMAC-SHA256 under the subscription's
//! secret over `"{timestamp}.{body}"`, sent as
//! `Kandev-Signature: t=<unix seconds>,v1=<hex>` — the scheme Stripe uses,
//! so a receiver checks both that the body is the one signed and that it
//! was signed recently (replays of an old delivery fail the age check).

use sha2::{Digest, Sha256};

/// The header a delivery's signature travels in.
pub const SIGNATURE_HEADER: &str = "kandev-signature";
/// The header naming the delivery (receivers de-duplicate by it).
pub const DELIVERY_HEADER: &str = "kandev-delivery";
/// The header naming the event.
pub const EVENT_HEADER: &str = "kandev-event";

const BLOCK: usize = 64;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| k.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The `Kandev-Signature` value for `body` sent at `timestamp` (Unix
/// seconds).
pub fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    let signed = format!("{timestamp}.{body}");
    let mac = hmac_sha256(secret.as_bytes(), signed.as_bytes());
    format!("t={timestamp},v1={}", hex::encode(mac))
}

/// What a receiver does, for tests and the documented recipe: the header
/// parses, the timestamp is within `tolerance_s` of `now_s`, and one `v1`
/// matches the body (compared in constant time).
pub fn verify(secret: &str, header: &str, body: &str, now_s: i64, tolerance_s: i64) -> bool {
    let mut timestamp = None;
    let mut candidates = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", v)) => candidates.push(v),
            _ => {}
        }
    }
    let Some(t) = timestamp else { return false };
    if (now_s - t).abs() > tolerance_s {
        return false;
    }
    let want = hex::encode(hmac_sha256(
        secret.as_bytes(),
        format!("{t}.{body}").as_bytes(),
    ));
    candidates.iter().any(|c| {
        use subtle::ConstantTimeEq;
        c.len() == want.len() && bool::from(c.as_bytes().ct_eq(want.as_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than a block is hashed first.
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_signature_verifies_and_a_changed_body_or_old_one_does_not() {
        let header = signature("whsec_0123456789abcdef", 1_700_000_000, r#"{"a":1}"#);
        assert!(header.starts_with("t=1700000000,v1="));
        assert!(verify(
            "whsec_0123456789abcdef",
            &header,
            r#"{"a":1}"#,
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "whsec_0123456789abcdef",
            &header,
            r#"{"a":2}"#,
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "another secret",
            &header,
            r#"{"a":1}"#,
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "whsec_0123456789abcdef",
            &header,
            r#"{"a":1}"#,
            1_700_001_000,
            300
        ));
        assert!(!verify(
            "whsec_0123456789abcdef",
            "v1=00",
            r#"{"a":1}"#,
            0,
            300
        ));
    }
}
