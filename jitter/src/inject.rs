//! Noise in the replay simulator (jitSim's stated future work, as
//! LogGOPSim does it): each actor of a `pnmpi sim replay` walks a noise
//! timeline from its own starting point, and every stretch of CPU the
//! engine gives it (its CPU bursts, and the models' send and receive
//! overheads) is lengthened by the noise met on the way.

use crate::sim::{placement, NoiseSource, Start};
use pnmpi_sim::engine::Noise;

/// The engine's [`Noise`] over noise traces.
pub struct ReplayNoise {
    sources: Vec<NoiseSource>,
    /// Per actor: where its time 0 sits in its source, ns.
    offsets: Vec<u64>,
}

impl ReplayNoise {
    /// Noise for `actors` actors (actor i on source i mod len), placed by
    /// `mode` with `seed`.
    pub fn new(sources: Vec<NoiseSource>, actors: usize, mode: Start, seed: u64) -> ReplayNoise {
        let offsets = placement(&sources, actors, mode, seed, &[]);
        ReplayNoise { sources, offsets }
    }
}

impl Noise for ReplayNoise {
    fn run(&mut self, actor: usize, start: f64, work: f64) -> f64 {
        let Some(&offset) = self.offsets.get(actor) else {
            return start + work;
        };
        let tl = &self.sources[actor % self.sources.len()].timeline;
        let whole = work.max(0.0).round() as u64;
        let mut c = tl.at(offset + start.max(0.0) as u64);
        let noise = tl.work(&mut c, whole) - whole;
        // Only the noise is added: without any, the time is exactly the
        // noise-free one.
        start + work + noise as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_noise_adds_nothing_and_a_duty_cycle_stretches_by_its_share() {
        let quiet = NoiseSource::from_rows("q", &[(0, 1000)]).unwrap();
        let mut n = ReplayNoise::new(vec![quiet], 4, Start::Unsync, 1);
        assert_eq!(n.run(2, 12.25, 333.5), 12.25 + 333.5);
        // 10 % noise: 1 us every 10 us; 90 us of work from a noise event's
        // end meets 9 events (the 10th starts as the work ends).
        let duty = NoiseSource::from_rows("d", &[(1000, 9000)]).unwrap();
        let mut n = ReplayNoise {
            offsets: vec![1000],
            sources: vec![duty],
        };
        assert_eq!(n.run(0, 0.0, 90_000.0), 99_000.0);
    }
}
