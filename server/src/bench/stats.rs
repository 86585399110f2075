//! Percentiles of a sample.

#[derive(Debug, Clone, Copy, Default)]
pub struct Summary {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub count: usize,
}

impl Summary {
    pub fn of(mut samples: Vec<f64>) -> Summary {
        if samples.is_empty() {
            return Summary::default();
        }
        samples.sort_by(f64::total_cmp);
        Summary {
            p50: percentile(&samples, 0.50),
            p99: percentile(&samples, 0.99),
            max: samples[samples.len() - 1],
            count: samples.len(),
        }
    }
}

/// The nearest-rank percentile `p` (0–1) of sorted, non-empty samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
