//! Eight lanes, for the parallel-flush test and the flush bench (which includes this file by path).

use aqueduct_bevy::Lane;
use bevy_ecs::prelude::*;

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lanes {
    L0,
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    L7,
}
impl Lane for Lanes {}

pub const LANES: [Lanes; 8] = [Lanes::L0, Lanes::L1, Lanes::L2, Lanes::L3, Lanes::L4, Lanes::L5, Lanes::L6, Lanes::L7];
