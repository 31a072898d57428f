//! A bake's output frames made on a thread of their own: while the physics steps toward the next
//! samples, the samples already computed are interpolated, skinned onto the glTF's pose and
//! written. On two cores this takes the per-frame output work (about as long as the physics
//! steps on a 16k-vertex character) off the stepping thread.
//!
//! The samples go to the output thread in order through a bounded channel ([`IN_FLIGHT`]
//! waiting at most) and their buffers come back to be refilled, so memory does not grow with
//! the clip. The output thread's first error stops it; the stepping side's next hand-over then
//! fails, which stops the simulation, and the output error is the one reported.

use std::sync::mpsc::{channel, sync_channel};

use anyhow::{anyhow, Result};

/// Samples that may wait for the output thread before the stepping side blocks.
const IN_FLIGHT: usize = 2;

/// Runs `produce(sink)` on this thread; every `sink(k, u)` call hands a copy of `u` to
/// `consume(k, u)`, which runs on a second thread, in the order of the calls. Returns what
/// `produce` returned and the outcome of the consumption (its first error, or a panic as an
/// error). A `sink` call fails once the consumer has stopped.
///
/// Errors (the outer result): the second thread cannot be started (nothing was produced).
pub fn pipelined<T>(
    consume: &mut (dyn FnMut(usize, &[f64]) -> Result<()> + Send),
    produce: impl FnOnce(&mut dyn FnMut(usize, &[f64]) -> Result<()>) -> T,
) -> Result<(T, Result<()>)> {
    std::thread::scope(|scope| {
        let (full, to_consume) = sync_channel::<(usize, Vec<f64>)>(IN_FLIGHT);
        let (consumed, empty) = channel::<Vec<f64>>();
        let consumer = std::thread::Builder::new()
            .name("overtone output frames".into())
            .spawn_scoped(scope, move || -> Result<()> {
                for (k, u) in to_consume {
                    consume(k, &u)?;
                    // The stepping side may have finished: then nobody wants the buffer back.
                    let _ = consumed.send(u);
                }
                Ok(())
            })
            .map_err(|e| anyhow!("cannot start the output frames' thread: {e}"))?;
        let mut sink = |k: usize, u: &[f64]| -> Result<()> {
            let mut buf = empty.try_recv().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(u);
            full.send((k, buf))
                .map_err(|_| anyhow!("the output frames' thread stopped"))
        };
        let out = produce(&mut sink);
        drop(full);
        let outcome = consumer
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the output frames' thread panicked")));
        Ok((out, outcome))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample reaches the consumer once, in order, with its values; a consumer error
    /// stops the hand-overs and is returned.
    #[test]
    fn samples_reach_the_consumer_in_order_and_its_error_stops_the_producer() {
        let mut seen = Vec::new();
        let mut consume = |k: usize, u: &[f64]| -> Result<()> {
            assert_eq!(u, &[k as f64, 2.0 * k as f64][..]);
            seen.push(k);
            Ok(())
        };
        let (n, outcome) = pipelined(&mut consume, |sink| {
            (0..1000)
                .filter(|k| k % 3 != 1)
                .map(|k| sink(k, &[k as f64, 2.0 * k as f64]).unwrap())
                .count()
        })
        .unwrap();
        outcome.unwrap();
        assert_eq!(seen, (0..1000).filter(|k| k % 3 != 1).collect::<Vec<_>>());
        assert_eq!(n, seen.len());

        let mut failing = |k: usize, _: &[f64]| -> Result<()> {
            anyhow::ensure!(k < 10, "sample {k} refused");
            Ok(())
        };
        let (handed, outcome) = pipelined(&mut failing, |sink| {
            (0..1000).take_while(|&k| sink(k, &[0.0]).is_ok()).count()
        })
        .unwrap();
        assert!(outcome.unwrap_err().to_string().contains("sample 10 refused"));
        // The producer stopped within the channel's depth after the failing sample (0..=10
        // handed over and consumed, at most `IN_FLIGHT` more waiting when the consumer stopped).
        assert!((11..=11 + IN_FLIGHT).contains(&handed), "{handed} samples handed over");
    }
}
