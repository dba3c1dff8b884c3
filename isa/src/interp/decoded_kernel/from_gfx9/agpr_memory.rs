//! gfx90a's and gfx942's loads and stores with AGPR data: the `acc` bit (MI200 ISA guide: DS
//! bit 25, for vdst, data0 and data1; FLAT/GLOBAL/SCRATCH and MUBUF bit 55, for vdst and data)
//! says the data registers are AGPRs. The AGPRs live in rows past the VGPRs ([`agpr_row`]), which
//! gfx11's 8-bit VGPR fields cannot name, so the access is translated as the same access on a
//! window of VGPRs (chosen clear of the address registers) and planned as [`Plan::AgprMemory`]:
//! the window's rows and the AGPR rows are exchanged before the access and back after it, so
//! the access reads and writes the AGPRs and the window's VGPRs keep their values.
//!
//! Loads and stores only: atomics (whose returned and sent data may name the same AGPRs) and
//! the lane-crossing DS operations are refused with AGPR data.

use super::mfma::agpr_row;
use super::{Plan, Refusal};
use crate::gfx9::{self, Encoding as E9};
use crate::gfx11::{self, Slot};
use crate::interp::memory_ops::Access;
use crate::interp::wave::Wave;

/// A load or store on AGPRs: the access as planned on the VGPR windows, and each window (its
/// first VGPR, the first AGPR row it stands for, and its length).
pub(crate) struct AgprMemory {
    pub access: Access,
    pub windows: Vec<(u16, u16, u8)>,
}

impl AgprMemory {
    /// Exchanges each window's VGPR rows with its AGPR rows in the running half (its own
    /// inverse); `false`, changing nothing, where a row is past the wave's.
    pub(crate) fn exchange(&self, wave: &mut Wave) -> bool {
        let rows = wave.vgpr.len();
        let fits = self.windows.iter().all(|&(vgpr, agpr, count)| {
            (vgpr as usize + count as usize) <= rows && (agpr as usize + count as usize) <= rows
        });
        if fits {
            for &(vgpr, agpr, count) in &self.windows {
                for index in 0..count as usize {
                    wave.vgpr.swap(vgpr as usize + index, agpr as usize + index);
                }
            }
        }
        fits
    }
}

/// Whether `instruction` is a memory access with its `acc` bit set on a processor that has it.
pub(super) fn handles(instruction: &gfx9::Instruction) -> bool {
    let [w0, w1, _] = instruction.words;
    instruction.processor.has_unified_registers()
        && match instruction.encoding {
            E9::Ds => w0 >> 25 & 1 == 1,
            E9::Flat | E9::Global | E9::Scratch | E9::Mubuf | E9::Mtbuf => w1 >> 23 & 1 == 1,
            _ => false,
        }
}

/// The plan of an access with AGPR data (one [`handles`]) in a kernel whose SDWA shadow rows
/// start at `shadow`: the access with its acc bit cleared and its data fields moved to VGPR
/// windows, translated as any access is, then wrapped.
pub(super) fn planned(instruction: &gfx9::Instruction, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let mnemonic = instruction.entry.mnemonic;
    let plain = ["_load", "_store", "ds_read", "ds_write"].iter().any(|kind| mnemonic.contains(kind));
    if !plain || mnemonic.contains("atomic") || mnemonic.contains("addtid") {
        return Err(Refusal("AGPR data in an access other than a load or store"));
    }
    let [mut w0, mut w1, w2] = instruction.words;
    // The data fields (bit position in the second word) and the address field's first VGPR;
    // an address takes at most two VGPRs (FLAT's, GLOBAL's without saddr, MUBUF's offen+idxen).
    let mut fields = Vec::new();
    for slot in instruction.entry.slots {
        let field = match (instruction.encoding, *slot) {
            (E9::Ds, Slot::Data0(width)) => (8, width),
            (E9::Ds, Slot::Data1(width)) => (16, width),
            (_, Slot::Vdst(width)) => (24, width),
            (E9::Flat | E9::Global | E9::Scratch, Slot::Data(width)) => (8, width),
            (E9::Mubuf | E9::Mtbuf, Slot::Vdata(width)) => (8, width),
            _ => continue,
        };
        fields.push(field);
    }
    let address = w1 & 0xFF;
    let mut windows: Vec<(u16, u16, u8)> = Vec::new();
    for (shift, width) in fields {
        let number = w1 >> shift & 0xFF;
        if number as usize + width as usize > super::mfma::AGPRS {
            return Err(Refusal("an AGPR tuple past a255"));
        }
        // The lowest window of `width` VGPRs, at a multiple of 4, clear of the address and of
        // the windows already taken.
        let clear = |start: u32| {
            let end = start + width as u32;
            let apart = |first: u32, count: u32| end <= first || first + count <= start;
            apart(address, 2) && windows.iter().all(|&(vgpr, _, count)| apart(vgpr as u32, count as u32))
        };
        let start = (0..64).map(|index| 4 * index).find(|&start| clear(start)).ok_or(Refusal("no VGPR window"))?;
        w1 = (w1 & !(0xFF << shift)) | start << shift;
        windows.push((start as u16, agpr_row(shadow, number), width));
    }
    // Two fields naming overlapping AGPRs would exchange the same rows twice.
    let overlap = windows.iter().enumerate().any(|(index, &(_, a, count))| {
        windows[index + 1..].iter().any(|&(_, b, other)| a < b + other as u16 && b < a + count as u16)
    });
    if overlap {
        return Err(Refusal("two data fields naming the same AGPRs"));
    }
    match instruction.encoding {
        E9::Ds => w0 &= !(1 << 25),
        _ => w1 &= !(1 << 23),
    }
    let plain = gfx9::Instruction { words: [w0, w1, w2], ..*instruction };
    match super::planned(&plain, shadow)? {
        (translated, Plan::Memory(access)) => {
            Ok((translated, Plan::AgprMemory(Box::new(AgprMemory { access, windows }))))
        }
        _ => Err(Refusal("an access with AGPR data that does not plan as a plain access")),
    }
}
