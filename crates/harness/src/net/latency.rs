//! Latencies in an HdrHistogram: percentiles without keeping every value, and histograms of
//! several load generators merge exactly. In JSON a histogram is HdrHistogram's own compressed
//! encoding (V2 with deflate) in base64, which other HdrHistogram tools read too.

use std::time::Duration;

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latencies in nanoseconds, to three significant digits, from 1 µs to an hour.
#[derive(Clone, Debug)]
pub struct Latency(Histogram<u64>);

const LOWEST_NS: u64 = 1_000;
const HIGHEST_NS: u64 = 3_600_000_000_000;

impl Default for Latency {
    fn default() -> Self {
        Self(Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, 3).expect("valid bounds"))
    }
}

impl PartialEq for Latency {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Latency {
    pub fn record(&mut self, latency: Duration) {
        let ns = (latency.as_nanos() as u64).clamp(LOWEST_NS, HIGHEST_NS);
        self.0.record(ns).expect("clamped into the histogram's range");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The latency at `percentile` (0 to 100); None when nothing was recorded.
    pub fn percentile(&self, percentile: f64) -> Option<Duration> {
        (self.count() > 0).then(|| Duration::from_nanos(self.0.value_at_percentile(percentile)))
    }

    pub fn max(&self) -> Option<Duration> {
        (self.count() > 0).then(|| Duration::from_nanos(self.0.max()))
    }

    pub fn add(&mut self, other: &Latency) -> Result<(), String> {
        self.0.add(&other.0).map_err(|e| format!("merging latency histograms: {e:?}"))
    }
}

impl Serialize for Latency {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .map_err(|e| serde::ser::Error::custom(format!("{e:?}")))?;
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).map_err(serde::de::Error::custom)?;
        let histogram: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| serde::de::Error::custom(format!("a latency histogram: {e:?}")))?;
        let mut latency = Latency::default();
        latency.0.add(&histogram).map_err(|e| serde::de::Error::custom(format!("a latency histogram: {e:?}")))?;
        Ok(latency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_survive_json_and_merge_exactly() {
        let (mut a, mut b) = (Latency::default(), Latency::default());
        for us in 1..=100 {
            a.record(Duration::from_micros(us * 10));
        }
        b.record(Duration::from_secs(2));
        let json = serde_json::to_string(&a).unwrap();
        let mut back: Latency = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
        back.add(&b).unwrap();
        assert_eq!(back.count(), 101);
        let p50 = back.percentile(50.0).unwrap().as_micros();
        assert!((500..=510).contains(&p50), "the median of 10..1000 µs and one 2 s: {p50} µs");
        assert_eq!(back.max().unwrap().as_millis(), 2000, "the slowest is kept, within 0.1%");
        assert_eq!(Latency::default().percentile(99.0), None);
    }
}
