//! The web app: the WASM bundle's size as built (raw and gzip), and the
//! server render time of a profile page over HTTP. Time to interactive in
//! a browser is left to the Playwright suite (no browser here).

use super::stats::Summary;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

pub struct Wasm {
    pub file: String,
    pub raw: u64,
    pub gzip: u64,
}

/// The largest `*.wasm` under `{site_root}/pkg`, or `None` when the site
/// is not built.
pub fn wasm(site_root: &str) -> anyhow::Result<Option<Wasm>> {
    let dir = Path::new(site_root).join("pkg");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(None);
    };
    let mut largest: Option<(u64, std::path::PathBuf)> = None;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "wasm") {
            let len = e.metadata()?.len();
            if largest.as_ref().is_none_or(|(l, _)| len > *l) {
                largest = Some((len, path));
            }
        }
    }
    let Some((raw, path)) = largest else {
        return Ok(None);
    };
    let bytes = std::fs::read(&path)?;
    // Level 9: what a server's precompressed asset would ship.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&bytes)?;
    let gzip = gz.finish()?.len() as u64;
    Ok(Some(Wasm {
        file: path.display().to_string(),
        raw,
        gzip,
    }))
}

/// Renders `GET {base}/profiles/{id}` `times` times; milliseconds each.
pub async fn render(
    http: &reqwest::Client,
    base: &str,
    profile_id: &str,
    times: usize,
) -> anyhow::Result<Summary> {
    let mut samples = Vec::with_capacity(times);
    for _ in 0..times {
        let t = Instant::now();
        let answer = http
            .get(format!("{base}/profiles/{profile_id}"))
            .send()
            .await?;
        let status = answer.status();
        let body = answer.bytes().await?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(
            status.is_success() && !body.is_empty(),
            "the profile page answered {status}"
        );
    }
    Ok(Summary::of(samples))
}

/// Peak resident memory (VmHWM) of this process, in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resets the peak to the current resident size (Linux `clear_refs` 5),
/// so the peak read later belongs to what ran after; answers whether it
/// could.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
