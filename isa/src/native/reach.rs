//! Which instructions control can reach from a kernel's entry, so that only those are compiled.
//!
//! A kernel is decoded from its entry to the end of its code object's text (`s_code_end`),
//! which holds every kernel after it too: the device library's `fill_x1` kernel is 3,769
//! instructions for a kernel of about a hundred. Compiling all of them cost each kernel a
//! millisecond and half a megabyte of code. Control reaches the fall-through of every
//! instruction but the unconditional ones (`s_endpgm`, `s_branch`, `s_setpc_b64`, `s_rfe_b64`)
//! and the static target of every branch and `s_call_b64`. An indirect jump's target
//! (`s_setpc_b64`, `s_swappc_b64`) is not known here: when it lands outside what was compiled,
//! the wave loop runs the interpreter's step there until control is back in compiled code
//! (`run.rs`), so nothing the interpreter runs is lost.

use crate::gfx11::Opcode;
use crate::interp::DecodedKernel;

/// What control reaches in a kernel, and how.
pub(super) struct Reach {
    /// Per word: whether an instruction starts there that control reaches from the entry by
    /// fall-through, branches and static calls.
    pub reached: Vec<bool>,
    /// Per word: whether a reached branch or static call targets it (control arrives there
    /// other than from the instruction before it).
    pub targets: Vec<bool>,
    /// Whether a reached instruction jumps where only the running wave knows (`s_setpc_b64`,
    /// `s_swappc_b64`, a call's return, `s_rfe_b64`): then any instruction may be arrived at
    /// from anywhere.
    pub indirect: bool,
}

/// What control reaches in `kernel` from its entry by fall-through, branches and static calls.
pub(super) fn reachable(kernel: &DecodedKernel) -> Reach {
    let words = kernel.words();
    let mut reached = vec![false; words];
    let mut targets = vec![false; words];
    let mut indirect = false;
    let mut pending = vec![0usize];
    while let Some(index) = pending.pop() {
        if index >= words || reached[index] {
            continue;
        }
        let Some(decoded) = kernel.at(index) else { continue };
        reached[index] = true;
        let next = index + decoded.len as usize / 4;
        // A branch's target: the word after it plus its signed 16-bit word offset.
        let simm = (decoded.instruction.words[0] & 0xFFFF) as i16 as isize;
        let target = usize::try_from(index as isize + 1 + simm).ok();
        use Opcode::*;
        let opcode = decoded.instruction.opcode();
        indirect |= matches!(opcode, SSetpcB64 | SSwappcB64 | SCallB64 | SRfeB64);
        let is_branch = matches!(
            opcode,
            SBranch
                | SCbranchScc0
                | SCbranchScc1
                | SCbranchVccz
                | SCbranchVccnz
                | SCbranchExecz
                | SCbranchExecnz
                | SCbranchCdbgsys
                | SCbranchCdbgsysAndUser
                | SCbranchCdbgsysOrUser
                | SCbranchCdbguser
                | SCallB64
        );
        if let Some(target) = target.filter(|&target| is_branch && target < words) {
            targets[target] = true;
        }
        match opcode {
            SEndpgm | SEndpgmSaved | SSetpcB64 | SRfeB64 => {}
            SBranch => pending.extend(target),
            // The conditional branches and the call: the target and the fall-through.
            _ if is_branch => {
                pending.extend(target);
                pending.push(next);
            }
            _ => pending.push(next),
        }
    }
    Reach { reached, targets, indirect }
}
