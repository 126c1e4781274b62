//! The conservative windows of a parallel replay: each process runs its
//! ranks' events up to the window's end, then applies what the others
//! sent (messages, completions, collective entries), and at the end the
//! processes gather their statistics.

use super::*;

impl Engine<'_, '_> {
    /// A parallel replay's windows: the local events before the window's
    /// end, then records exchanged until none is owed, then the next
    /// window from the earliest pending event of any process.
    pub(super) fn run_windows(
        &mut self,
        src: &mut dyn OpSource,
        progress: Option<&dyn Fn(u64, Ns)>,
    ) -> Result<(), SimError> {
        let mut next_progress = 1 << 20;
        loop {
            let end = self.part.as_ref().map_or(f64::INFINITY, |p| p.window_end);
            let began = std::time::Instant::now();
            while let Some((t, a)) = self.heap.peek() {
                if f64::from_bits(t) >= end {
                    break;
                }
                self.heap.pop();
                self.advance(a as usize, src)?;
            }
            if let Some(p) = self.part.as_mut() {
                p.cost.replay_s += began.elapsed().as_secs_f64();
            }
            if let Some(p) = progress {
                if self.stats.events >= next_progress {
                    p(self.stats.events, end);
                    next_progress = self.stats.events + (1 << 20);
                }
            }
            if let Some(part) = self.part.as_mut() {
                part.cost.windows += 1;
            }
            // One agreement a window (the earliest pending event, whether
            // anyone owes records, whether all is well); records move only
            // when some process owes some, and then the processes agree again.
            loop {
                let Some(part) = self.part.as_mut() else {
                    return Ok(());
                };
                let offer = kernel::window::Offer {
                    next: self.heap.peek().map(|(t, _)| f64::from_bits(t)),
                    owes: part.outbox.iter().any(|o| !o.is_empty()),
                    broken: part.unshared.is_some(),
                };
                let began = std::time::Instant::now();
                let agreed = part.x.agree(offer);
                part.cost.exchange_s += began.elapsed().as_secs_f64();
                if agreed.broken {
                    let which = part
                        .unshared
                        .map_or("a communicator".to_string(), |c| format!("communicator {c}"));
                    return Err(SimError::Parallel(format!(
                        "{which} of a tracer folder spans processes, and a folder's communicators are numbered by each process as it reads them: merge it first (pnmpi trace merge DIR -o T.pnt) and replay the .pnt in parallel"
                    )));
                }
                if !agreed.owed {
                    let Some(end) = agreed.window_end(part.lookahead) else {
                        if let Some(p) = progress {
                            p(self.stats.events, self.latest_end());
                        }
                        return Ok(());
                    };
                    part.window_end = end;
                    break;
                }
                let began = std::time::Instant::now();
                let out = std::mem::replace(&mut part.outbox, vec![Vec::new(); part.x.procs() as usize]);
                part.cost.exchanges += 1;
                part.cost.bytes += out.iter().map(|o| o.len() as u64).sum::<u64>();
                let incoming = part.x.alltoallv(&out);
                part.cost.exchange_s += began.elapsed().as_secs_f64();
                let records = Record::decode_all(&incoming)
                    .ok_or_else(|| SimError::Parallel("a damaged record between processes".into()))?;
                for r in records {
                    self.apply(r, src)?;
                }
            }
        }
    }

    /// A record from another process. A completion or an arrival before
    /// the end of the window that sent it would break the lookahead's
    /// promise (a model's `lookahead` too large): an error, not a wrong
    /// answer.
    pub(super) fn apply(&mut self, r: Record, src: &dyn OpSource) -> Result<(), SimError> {
        let end = self.part.as_ref().map_or(f64::NEG_INFINITY, |p| p.window_end);
        let early = match r {
            Record::Send {
                arrival: Some((a, _)),
                ..
            } => a < end,
            Record::Done { t, .. } => t < end,
            _ => false,
        };
        if early {
            return Err(SimError::Parallel(format!(
                "{r:?} lands before the end of its window ({end} ns): the model's lookahead ({} ns) is too large",
                self.model.lookahead()
            )));
        }
        match r {
            Record::Send {
                key,
                req,
                bytes,
                post,
                free,
                arrival,
                synchronous,
            } => {
                let s = PendingSend {
                    req,
                    msg: self.msg(key.0, key.1, bytes),
                    post,
                    free,
                    data: arrival.map_or(Data::Waiting, |(at, wait)| Data::Arrived(at, wait)),
                };
                if synchronous {
                    self.synchronous.insert((key.0, req));
                }
                self.deliver(key, s);
            }
            Record::Done { req, t, partner } => self.complete(req, t, partner),
            Record::Arrive {
                comm,
                seq,
                clock,
                req,
                coll,
                root,
                bytes,
            } => {
                // The member's rank names only `MPI_COMM_SELF`'s member,
                // and a communicator of one never crosses processes: the
                // first local rank looks the others up alike.
                if let Some(members) = self.members(src, self.first_rank, comm) {
                    self.arrive(
                        (comm, seq),
                        Shape {
                            coll,
                            size: members.len() as u32,
                            me: 0,
                            root,
                            bytes,
                        },
                        &members,
                        clock,
                        req,
                    );
                }
            }
        }
        Ok(())
    }

    /// A parallel replay's end: every process's figures (and deadlocked
    /// ranks) gathered at process 0, which adds them up.
    pub(super) fn finish_parallel(mut self, src: &dyn OpSource) -> Result<Option<Outcome>, SimError> {
        let stuck: Vec<usize> = (0..self.actors.len()).filter(|&a| !self.actors[a].done).collect();
        let report = if stuck.is_empty() {
            String::new()
        } else {
            self.deadlock_report(&stuck)
        };
        let partial = parallel::Partial {
            routines: self
                .stats
                .routines
                .iter()
                .zip(&self.routine_ps)
                .map(|(r, &(t, w))| (r.count, t, w))
                .collect(),
            sizes: self.stats.sizes.counts.clone(),
            bandwidths: self.stats.bandwidths.counts.clone(),
            messages: self.stats.messages,
            resource_wait_ps: self.resource_wait_ps,
            events: self.stats.events,
            peak_in_flight: self.stats.peak_in_flight.max(self.mail.in_flight()) as u64,
            stuck: report,
            replay_s: self.part.as_ref().map_or(0.0, |p| p.cost.replay_s),
        };
        // The replay's state is freed before process 0 makes the world's
        // figures: the peak is the larger of the two, not their sum.
        self.actors = Vec::new();
        self.mail = Mailboxes::default();
        self.reqs = Requests::default();
        let part = self.part.as_mut().expect("a parallel replay");
        // Process 0 has its own actors' figures: the others send theirs.
        let mine: Vec<usize> = if part.x.me() == 0 {
            Vec::new()
        } else {
            (0..self.stats.actors.len()).collect()
        };
        // Process 0 reports for all (a deadlock too, with every process's ranks).
        let Some(all) = part.x.gather(&partial.encode(&self.stats.actors, &mine)) else {
            return Ok(None);
        };
        let (world, procs) = (part.world, part.x.procs());
        // Every actor of the world, at process 0, its own (the first) in place.
        let mut actors: Vec<ActorStats> = src
            .actors()
            .iter()
            .map(|a| ActorStats {
                rank: a.rank,
                thread: a.thread,
                node: self.rank_node.get(a.rank as usize).copied().unwrap_or(0),
                ..ActorStats::default()
            })
            .collect();
        let own = std::mem::take(&mut self.stats.actors);
        for (slot, a) in actors[self.first..].iter_mut().zip(own) {
            *slot = a;
        }
        let parts = parallel::Partial::decode_all(&all, &mut actors, |r| parallel::owner(r, world, procs))
            .ok_or_else(|| SimError::Parallel("a damaged result from another process".into()))?;
        self.stats.actors = actors;
        if let Some(p) = self.part.as_mut() {
            let replay = parts.iter().map(|x| x.replay_s);
            p.cost.replay_min_s = replay.clone().fold(f64::INFINITY, f64::min);
            p.cost.replay_max_s = replay.fold(0.0, f64::max);
        }
        let stuck: Vec<&str> = parts
            .iter()
            .map(|p| p.stuck.as_str())
            .filter(|s| !s.is_empty())
            .collect();
        if !stuck.is_empty() {
            return Err(SimError::Deadlock(stuck.join("\n")));
        }
        let mut stats = std::mem::take(&mut self.stats);
        let (routines, resource_wait) = parallel::Partial::merge(parts, &mut stats);
        self.stats = stats;
        self.routine_ps = routines;
        self.resource_wait_ps = resource_wait;
        self.settle();
        // The peak of each process's unmatched messages, added up (the
        // serial replay's single peak has no parallel counterpart).
        let runtime = self.stats.actors.iter().map(|s| s.end).fold(0.0, f64::max);
        Ok(Some(Outcome {
            runtime,
            stats: self.stats,
            protocol: self.part.as_ref().map(|p| p.cost),
        }))
    }
}
