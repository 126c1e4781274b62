//! The network as SimGrid sees it: links, each with a bandwidth, a
//! latency and a sharing policy, and a route between any two hosts that
//! lists the links a message crosses, in order. The shapes that build
//! such a graph (SimGrid's fat trees, dragonflies and tori, and xSim's
//! star, ring, mesh and tree) and the sharing of links by the flows in
//! flight (max-min fairness, SimGrid's CM02) are written against this
//! one description, so that a route computed once is the same for every
//! simulator mode.
//!
//! Each shape routes as SimGrid 3.32's zone of the same shape does, link
//! for link, and names its links as SimGrid does
//! (`sim/tests/simgrid_routes.rs` compares every pair's route with
//! libsimgrid's on random platforms).

pub mod cluster;
pub mod dragonfly;
pub mod fat_tree;
pub mod flows;
mod graph;
pub mod load;
pub mod maxmin;
pub mod mesh;
pub mod spec;
pub mod torus;
pub mod tree;

pub use graph::{Graph, Link, LinkId, Private, Sharing};
