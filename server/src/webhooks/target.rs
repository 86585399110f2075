//! Where a delivery may go (SSRF safety). A receiver URL is `http` or
//! `https` with a host and no credentials; every address its host resolves
//! to must be public — loopback, private, link-local, carrier-grade NAT,
//! unique-local, multicast and unspecified addresses are refused unless
//! the server runs with `--allow-private-webhooks`. The check runs when a
//! subscription is made and again at every delivery, and the delivery
//! connects to the very address checked (no second lookup a rebinding
//! DNS server could answer differently). Redirects are followed only to
//! the same host, which stays pinned to that address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A receiver URL that passed the static checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: reqwest::Url,
    pub host: String,
    pub port: u16,
}

/// Reads `url` as a receiver URL: what is wrong with it otherwise.
pub fn parse(url: &str) -> Result<Target, String> {
    let parsed = reqwest::Url::parse(url.trim()).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme must be http or https, not `{}`",
            parsed.scheme()
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("a receiver URL carries no credentials; sign with the secret".into());
    }
    // An IPv6 literal is written in brackets; its address is without.
    let host = match parsed.host_str() {
        Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']').to_string(),
        _ => return Err("the URL has no host".into()),
    };
    let port = parsed
        .port_or_known_default()
        .ok_or("the URL has no port")?;
    Ok(Target {
        url: parsed,
        host,
        port,
    })
}

/// Whether `ip` is an address no receiver may have unless private
/// receivers are allowed.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => private_v4(a),
        IpAddr::V6(a) => private_v6(a),
    }
}

fn private_v4(a: Ipv4Addr) -> bool {
    let [o0, o1, ..] = a.octets();
    a.is_private()
        || a.is_loopback()
        || a.is_link_local()
        || a.is_unspecified()
        || a.is_broadcast()
        || a.is_multicast()
        || a.is_documentation()
        || o0 == 0
        // Carrier-grade NAT, 100.64.0.0/10.
        || (o0 == 100 && (o1 & 0xc0) == 64)
        // Benchmarking, 198.18.0.0/15, and the reserved 240.0.0.0/4.
        || (o0 == 198 && (o1 & 0xfe) == 18)
        || o0 >= 240
}

fn private_v6(a: Ipv6Addr) -> bool {
    let first = a.segments()[0];
    a.is_loopback()
        || a.is_unspecified()
        || a.is_multicast()
        // Unique local, fc00::/7; link-local, fe80::/10.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || a.to_ipv4_mapped().is_some_and(private_v4)
        || a.to_ipv4().is_some_and(|v4| a.segments()[..6] == [0; 6] && private_v4(v4))
}

/// Resolves the target's host and answers the address to connect to:
/// the first, once every one is allowed.
pub async fn resolve(target: &Target, allow_private: bool) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = match target.host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, target.port)],
        Err(_) => tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(|e| format!("cannot resolve `{}`: {e}", target.host))?
            .collect(),
    };
    let Some(first) = addrs.first().copied() else {
        return Err(format!("`{}` resolves to no address", target.host));
    };
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| is_private(a.ip())) {
            return Err(format!(
                "`{}` resolves to {}, a private or loopback address; receivers must be public \
                 (or the server must run with --allow-private-webhooks)",
                target.host,
                bad.ip()
            ));
        }
    }
    Ok(first)
}

/// An HTTP client for one delivery to `target`: connects only to `addr`
/// (checked), follows redirects to the same host only (at most 3), no
/// proxy, `timeout` for the whole exchange.
pub fn client(
    target: &Target,
    addr: SocketAddr,
    timeout: std::time::Duration,
) -> reqwest::Result<reqwest::Client> {
    let host = target.host.clone();
    let port = target.port;
    reqwest::Client::builder()
        .resolve(&target.host, addr)
        .no_proxy()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            let same = attempt.url().host_str() == Some(host.as_str())
                && attempt.url().port_or_known_default() == Some(port);
            if same && attempt.previous().len() < 3 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_with_a_host_and_no_credentials() {
        assert!(parse("https://hooks.example/x").is_ok());
        assert!(parse("http://hooks.example:8080/x").is_ok());
        for bad in [
            "ftp://hooks.example/x",
            "file:///etc/passwd",
            "gopher://x",
            "https://user:pw@hooks.example/",
            "not a url",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn private_and_loopback_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "100.128.0.1"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn a_loopback_receiver_needs_the_flag() {
        let t = parse("http://127.0.0.1:9/hook").unwrap();
        assert!(resolve(&t, false)
            .await
            .unwrap_err()
            .contains("private or loopback"));
        assert_eq!(
            resolve(&t, true).await.unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        let t = parse("http://[::1]:9/hook").unwrap();
        assert!(resolve(&t, false).await.is_err());
    }
}
