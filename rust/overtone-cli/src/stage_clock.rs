//! Wall-clock time of every stage of a bake, for its report: the stages the command marks
//! itself and the ones the core reports through its progress (the character's embedding
//! stages), in the order they ran.

use std::sync::Mutex;
use std::time::Instant;

/// Records when each stage began (milliseconds since the clock started). As a
/// [`overtone::progress::Progress`] installed around a core call it records a stage each time
/// the reported stage name changes.
pub struct StageClock {
    start: Instant,
    marks: Mutex<Vec<(String, f64)>>,
}

impl StageClock {
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            marks: Mutex::new(Vec::new()),
        }
    }

    /// Stage `name` begins now (the previous one ends).
    pub fn mark(&self, name: &str) {
        let t = self.elapsed_ms();
        let mut marks = self.marks.lock().expect("stage clock");
        if marks.last().map(|(n, _)| n.as_str()) != Some(name) {
            marks.push((name.to_string(), t));
        }
    }

    /// Milliseconds since the clock started.
    pub fn elapsed_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }

    /// `(stage, milliseconds)` of every stage so far, the last one up to now.
    pub fn stages(&self) -> Vec<(String, f64)> {
        let now = self.elapsed_ms();
        let marks = self.marks.lock().expect("stage clock");
        marks
            .iter()
            .enumerate()
            .map(|(i, (name, t))| {
                let end = marks.get(i + 1).map_or(now, |m| m.1);
                (name.clone(), end - t)
            })
            .collect()
    }
}

impl overtone::progress::Progress for StageClock {
    fn report(&self, _fraction: f64, stage: &str) {
        self.mark(stage);
    }
    fn cancelled(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stages follow each other without gaps: their durations add up to the clock's elapsed
    /// time (to the microsecond), repeated names merge, each duration is non-negative.
    #[test]
    fn stages_tile_the_elapsed_time() {
        let c = StageClock::new();
        c.mark("a");
        std::thread::sleep(std::time::Duration::from_millis(2));
        overtone::progress::Progress::report(&c, 0.5, "b");
        overtone::progress::Progress::report(&c, 0.6, "b");
        c.mark("c");
        let s = c.stages();
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(s[0].1 >= 2.0 && s.iter().all(|(_, ms)| *ms >= 0.0), "{s:?}");
        let total: f64 = s.iter().map(|(_, ms)| ms).sum();
        let first = c.marks.lock().unwrap()[0].1;
        assert!((c.elapsed_ms() - first - total).abs() < 1.0, "{total}");
    }
}
