//! The binding table: what a program's dynamic bindings point at for one execution.

use crate::error::{EngineError, EngineResult};
use crate::memory::{Binding, Buffer};

/// One slot: a range of a buffer.
#[derive(Clone, Debug)]
pub(crate) struct TableSlot {
    pub buffer: Buffer,
    pub offset: u64,
    pub length: u64,
}

/// Slots that each hold a buffer, an offset and a length. A command buffer's dynamic bindings
/// name slots; [`crate::Queue::execute`] checks the table against the program's needs once and
/// resolves every slot to a device pointer. Reuse a table across executions and change only
/// the slots that differ (batch inference: one slot per input).
#[derive(Clone, Debug, Default)]
pub struct BindingTable {
    pub(crate) slots: Vec<Option<TableSlot>>,
}

impl BindingTable {
    /// An empty table with room for `slots` slots.
    pub fn with_capacity(slots: usize) -> Self {
        Self { slots: Vec::with_capacity(slots) }
    }

    /// A table whose slot `i` is `bindings[i]`.
    pub fn from_bindings(bindings: &[Binding]) -> EngineResult<Self> {
        let mut table = Self::with_capacity(bindings.len());
        for (slot, binding) in bindings.iter().enumerate() {
            table.set(slot as u32, *binding)?;
        }
        Ok(table)
    }

    /// Sets slot `slot` to `binding`, growing the table as needed.
    pub fn set(&mut self, slot: u32, binding: Binding) -> EngineResult<()> {
        binding.buffer.check_range("binding table slot", binding.offset, binding.length)?;
        if slot >= super::recorder::MAX_BINDING_SLOTS {
            return Err(EngineError::InvalidArgument {
                what: "binding table slot",
                reason: format!("slot {slot} is past the slot limit"),
            });
        }
        let index = slot as usize;
        if self.slots.len() <= index {
            self.slots.resize(index + 1, None);
        }
        self.slots[index] =
            Some(TableSlot { buffer: binding.buffer.clone(), offset: binding.offset, length: binding.length });
        Ok(())
    }

    /// Empties slot `slot`.
    pub fn clear_slot(&mut self, slot: u32) {
        if let Some(entry) = self.slots.get_mut(slot as usize) {
            *entry = None;
        }
    }

    /// Slots the table spans (set or not).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the table spans no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}
