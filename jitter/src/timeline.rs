//! A noise trace as a periodic timeline, and a task's walk through it.
//!
//! Row `i` of a trace is `(J_i, G_i)`: a noise event of `J_i` ns, then
//! `G_i` ns of free CPU before the next one. The rows laid end to end make
//! one period; a run longer than the trace wraps around (a periodic or
//! bursty trace need not be as long as the simulated run). A task that
//! starts "at row i" starts right after row i's noise, with `G_i` free ns
//! ahead of it (the paper's figure 2). Times are integer ns, so worked
//! examples in cycles come out exactly with a 1 GHz clock.

/// A cursor: where a task is in the timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Position in the period, ns.
    pub pos: u64,
    /// Index of the first event that ends after `pos` (== events: none
    /// before the period's end).
    pub next: u32,
}

/// Noise events in one period: `[start, end)` pairs, sorted, disjoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    starts: Vec<u64>,
    ends: Vec<u64>,
    period: u64,
}

impl Timeline {
    /// From `(jitter, gap)` rows, in ns. `None` if the rows have no free
    /// time at all (no work could ever be done).
    pub fn from_rows(rows: &[(u64, u64)]) -> Option<Timeline> {
        let mut t = Timeline {
            starts: Vec::with_capacity(rows.len()),
            ends: Vec::with_capacity(rows.len()),
            period: 0,
        };
        let mut at = 0u64;
        for &(j, g) in rows {
            if j > 0 {
                t.starts.push(at);
                t.ends.push(at + j);
            }
            at += j + g;
        }
        t.period = at;
        let noise: u64 = rows.iter().map(|r| r.0).sum();
        (at > noise).then_some(t)
    }

    /// From `(start, duration)` events in ns (LogGOPSim, netgauge), in any
    /// order; overlapping events merge. The period ends with the last
    /// event. `None` if there is no free time.
    pub fn from_events(events: &[(u64, u64)]) -> Option<Timeline> {
        let mut ev: Vec<(u64, u64)> = events.iter().map(|&(s, d)| (s, s + d)).collect();
        ev.sort_unstable();
        let mut t = Timeline {
            starts: Vec::new(),
            ends: Vec::new(),
            period: 0,
        };
        for (s, e) in ev {
            match t.ends.last_mut() {
                Some(last) if s <= *last => *last = (*last).max(e),
                _ if e > s => {
                    t.starts.push(s);
                    t.ends.push(e);
                }
                _ => {}
            }
        }
        t.period = t.ends.last().copied().unwrap_or(0);
        let noise: u64 = t.starts.iter().zip(&t.ends).map(|(s, e)| e - s).sum();
        (t.period > noise).then_some(t)
    }

    /// Length of one period, ns.
    pub fn period(&self) -> u64 {
        self.period
    }

    /// Where each noise event ends, ns into the period.
    pub fn ends(&self) -> &[u64] {
        &self.ends
    }

    /// Noise events per period.
    pub fn events(&self) -> usize {
        self.starts.len()
    }

    /// Fraction of the period taken by noise.
    pub fn noise_fraction(&self) -> f64 {
        let noise: u64 = self.starts.iter().zip(&self.ends).map(|(s, e)| e - s).sum();
        noise as f64 / self.period as f64
    }

    /// A cursor at `pos` (wrapped into the period).
    pub fn at(&self, pos: u64) -> Cursor {
        let pos = pos % self.period;
        let next = self.ends.partition_point(|&e| e <= pos) as u32;
        Cursor { pos, next }
    }

    /// Wall time to do `work` ns of CPU from `c`, which moves past it: the
    /// free time between noise events is consumed, the noise met on the
    /// way is added (figure 2).
    #[inline]
    pub fn work(&self, c: &mut Cursor, mut work: u64) -> u64 {
        let mut elapsed = 0;
        let n = self.starts.len() as u32;
        loop {
            if work == 0 {
                return elapsed;
            }
            let (free_until, noise_end) = if c.next < n {
                let i = c.next as usize;
                (self.starts[i], self.ends[i])
            } else {
                (self.period, 0)
            };
            if c.pos < free_until {
                let free = free_until - c.pos;
                if work <= free {
                    c.pos += work;
                    return elapsed + work;
                }
                work -= free;
                elapsed += free;
                c.pos = free_until;
            }
            if c.next < n {
                // In the noise: it all passes before work goes on.
                elapsed += noise_end - c.pos;
                c.pos = noise_end;
                c.next += 1;
            } else {
                c.pos = 0;
                c.next = 0;
            }
        }
    }

    /// Moves `c` forward by `wait` ns of wall time (a task waiting: the
    /// noise it meets costs it nothing).
    #[inline]
    pub fn skip(&self, c: &mut Cursor, wait: u64) {
        if wait == 0 {
            return;
        }
        let to = c.pos + wait % self.period;
        if to < self.period && (c.next as usize >= self.ends.len() || self.ends[c.next as usize] > to) {
            c.pos = to;
            return;
        }
        *c = self.at(to);
    }

    /// The position right after row `row`'s noise (0-based), for a trace
    /// read from rows; rows without noise count too.
    pub fn row_start(rows: &[(u64, u64)], row: usize) -> u64 {
        rows.iter().take(row).map(|r| r.0 + r.1).sum::<u64>() + rows.get(row).map_or(0, |r| r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_wraps_around_the_period() {
        // Period 100: noise [0, 10), free [10, 100). From 95, 20 ns of
        // work: 5 free, the 10 of noise at the wrap, 15 free.
        let t = Timeline::from_rows(&[(10, 90)]).unwrap();
        let mut c = t.at(95);
        assert_eq!(t.work(&mut c, 20), 30);
        assert_eq!(c.pos, 25);
    }

    #[test]
    fn skipping_lands_on_the_right_event() {
        let rows = [(10, 50), (5, 30), (25, 20), (60, 60), (10, 70)];
        let t = Timeline::from_rows(&rows).unwrap();
        for start in [0, 7, 59, 60, 65, 200, 339] {
            for wait in [0, 1, 10, 55, 250, 1000, 5000] {
                let mut c = t.at(start);
                t.skip(&mut c, wait);
                assert_eq!(c, t.at(start + wait), "{start} + {wait}");
            }
        }
    }

    #[test]
    fn events_merge_and_all_noise_is_refused() {
        let t = Timeline::from_events(&[(100, 50), (120, 50), (10, 5)]).unwrap();
        assert_eq!(t.events(), 2);
        assert_eq!(t.period(), 170);
        assert!(Timeline::from_rows(&[(10, 0)]).is_none());
        assert!(Timeline::from_events(&[(0, 10)]).is_none());
    }
}
