//! Precompute sidecar (`.ovt`) loader with the fast solver's payload type. The first byte picks
//! the mode: even, the rest is the file as stored (with the key it names, so only the checks
//! after the key are exercised); odd, the rest is a payload wrapped in a valid header (length
//! and checksum fixed up), so the payload decoder and the shape checks see arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use overtone::cache::{decode_sidecar, read_sidecar_header, record_checksum, FORMAT_VERSION, LIBRARY_VERSION, MAGIC};
use overtone::dynamics::{ReducedModel, FAST_PRECOMPUTE_KIND};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (bytes, key) = if mode % 2 == 0 {
        let key = read_sidecar_header(rest).map(|h| h.key).unwrap_or([7; 32]);
        (rest.to_vec(), key)
    } else {
        let version = LIBRARY_VERSION.as_bytes();
        let key = [mode; 32];
        let kind = FAST_PRECOMPUTE_KIND.as_bytes();
        let mut b = Vec::with_capacity(92 + version.len() + kind.len() + rest.len());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.extend_from_slice(&(version.len() as u32).to_le_bytes());
        b.extend_from_slice(version);
        b.extend_from_slice(&(kind.len() as u32).to_le_bytes());
        b.extend_from_slice(kind);
        b.extend_from_slice(&key);
        b.extend_from_slice(&(rest.len() as u64).to_le_bytes());
        b.extend_from_slice(&record_checksum(FAST_PRECOMPUTE_KIND, &key, rest));
        b.extend_from_slice(rest);
        (b, key)
    };
    if let Ok(m) = decode_sidecar::<ReducedModel>(&bytes, FAST_PRECOMPUTE_KIND, &key) {
        for (d, n, c, rows, targets) in [(2, 4, 3, 3, 0), (3, 8, 4, 4, 0), (2, 0, 0, 0, 0), (3, 1, 12, 4, 2)] {
            let _ = m.check_shapes(d, n, c, rows, targets);
        }
        let _ = m.summary();
    }
});
