//! The record model: plain data, as the capture writes it and the tools read it.
//!
//! Every timestamp is in nanoseconds of the host clock the bundle header names: the engine converts
//! device ticks to that domain once, when it makes the record, so the tools never convert.

use core::fmt;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

/// What the bundle was captured on. It is the first chunk of every file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleHeader {
    /// The aqueduct version that wrote the bundle (`CARGO_PKG_VERSION` of the engine).
    pub aqueduct_version: String,
    pub device: DeviceDescription,
    /// How queues wait on each other from the device (`auto`, `barrier-value`, `barrier-and`).
    pub wait_strategy: String,
    pub clock: HostClock,
}

/// The HSA provider and its GPU agents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceDescription {
    /// `soft` or `rocr`.
    pub provider: String,
    #[serde(deserialize_with = "vec_as_read")]
    pub agents: Vec<AgentDescription>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDescription {
    /// The agent's marketing or soft-runtime name.
    pub name: String,
    /// The ISA name, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub isa: String,
}

/// The clock every timestamp of the bundle is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostClock {
    /// The clock domain, e.g. `CLOCK_MONOTONIC` (HSA's system timestamp domain on Linux).
    pub domain: String,
    /// The HSA system timestamp frequency the device ticks were converted from (Hz).
    pub tick_frequency_hz: u64,
}

/// One record of the bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Record {
    QueueEvent(QueueEvent),
    DeviceQueueEvent(DeviceQueueEvent),
    Dispatch(DispatchEvent),
    Executable(ExecutableMetadata),
    Counter(CounterSample),
    Dropped(Dropped),
}

/// The operation kinds are the engine's vocabulary (`aqueduct-vocabulary`); the records write
/// each by its name.
pub use aqueduct_vocabulary::OperationKind;

/// One host submission (mode `queue-events`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEvent {
    /// The queue's index on its device.
    pub queue: u32,
    pub operation: OperationKind,
    /// The queue epoch the submission completes (its completion signal's count).
    pub epoch: u64,
    #[serde(deserialize_with = "vec_as_read")]
    pub waits: Vec<Wait>,
    #[serde(deserialize_with = "vec_as_read")]
    pub signals: Vec<Signal>,
    /// AQL packets published, the device-side barriers included.
    pub packets: u32,
    pub kernarg_bytes: u64,
    /// When the submitting call entered the engine.
    pub submit_entry_ns: u64,
    /// When the last header of the submission was published (the doorbell follows).
    pub published_ns: u64,
    /// When the completion thread saw the epoch retire; absent when capture ended first.
    pub completion_seen_ns: Option<u64>,
}

/// A semaphore wait of a submission, and the admission tier that resolved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    pub semaphore: u64,
    pub value: u64,
    pub resolution: WaitResolution,
}

/// Admission's tiers, in the order it tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitResolution {
    /// The semaphore already held the value: dropped.
    Satisfied,
    /// The producer is the same queue, which runs in order: dropped.
    SameQueue,
    /// The queue's frontier already covered the producer's epoch: dropped.
    CoveredByFrontier,
    /// A device-side barrier on another queue's epoch.
    DeviceBarrier { producer_queue: u32, producer_epoch: u64 },
    /// Nothing had been submitted to reach the value (or the host signals it): parked and admitted
    /// again when the semaphore advanced.
    Deferred,
}

/// A semaphore signal of a submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signal {
    pub semaphore: u64,
    pub value: u64,
}

/// The device's begin and end of one submission (mode `device-queue-events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceQueueEvent {
    pub queue: u32,
    pub epoch: u64,
    pub begin_ns: u64,
    pub end_ns: u64,
}

/// Which command of which command buffer a dispatch ran, when an execution ran it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRef {
    pub command_buffer: u64,
    pub command_index: u32,
}

/// One dispatch, direct or run by a command buffer's execution (mode `dispatch-events`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatchEvent {
    pub queue: u32,
    /// The epoch of the submission that carried it.
    pub epoch: u64,
    /// The kernel symbol, without `.kd`.
    pub kernel: String,
    /// The `ExecutableMetadata::executable` it belongs to.
    pub executable: u64,
    /// Grid size in work-items, x y z.
    pub grid: [u32; 3],
    /// Workgroup size in work-items, x y z.
    pub workgroup: [u32; 3],
    /// Set for a dispatch a command buffer's execution ran.
    pub command: Option<CommandRef>,
    pub begin_ns: u64,
    pub end_ns: u64,
}

/// A loaded executable (mode `executable-metadata`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutableMetadata {
    /// The id dispatch records refer to; unique within the bundle.
    pub executable: u64,
    pub code_object_hash: CodeObjectHash,
    /// The code object's target ID, e.g. `amdgcn-amd-amdhsa--gfx11-generic`.
    pub target: String,
    /// The code-object version (4, 5 or 6).
    pub code_object_version: u32,
    #[serde(deserialize_with = "vec_as_read")]
    pub kernels: Vec<KernelMetadata>,
}

/// One kernel of an executable, from the code object's metadata note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelMetadata {
    /// The kernel symbol, without `.kd`.
    pub symbol: String,
    pub kernarg_size: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    /// `.reqd_workgroup_size`, when the kernel declares one.
    pub required_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`, when the kernel declares one.
    pub workgroup_size_hint: Option<[u32; 3]>,
}

/// The SHA-256 of a code object's bytes. Unlike the in-process identity the soft runtime keys host
/// kernels by, it leaves the process, so it must be stable across builds and machines.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeObjectHash(pub [u8; 32]);

impl CodeObjectHash {
    pub fn of(code_object: &[u8]) -> CodeObjectHash {
        CodeObjectHash(Sha256::digest(code_object).into())
    }
}

impl fmt::Display for CodeObjectHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for CodeObjectHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodeObjectHash({self})")
    }
}

// As 64 hex digits, so JSON output and the MessagePack body read the same.
impl Serialize for CodeObjectHash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CodeObjectHash {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        parse_hex_hash(&text).ok_or_else(|| serde::de::Error::custom("a code-object hash is 64 hex digits"))
    }
}

fn parse_hex_hash(text: &str) -> Option<CodeObjectHash> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 || !bytes.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut hash = [0u8; 32];
    for (index, pair) in bytes.chunks_exact(2).enumerate() {
        let digits = core::str::from_utf8(pair).ok()?;
        hash[index] = u8::from_str_radix(digits, 16).ok()?;
    }
    Some(CodeObjectHash(hash))
}

/// A software counter's value at a moment (mode `counters`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterSample {
    pub queue: u32,
    pub timestamp_ns: u64,
    /// e.g. `submissions`, `packets`, `parked-submissions`, `ring-high-water`.
    pub name: String,
    pub value: u64,
}

/// Records of a queue that the writer dropped because it fell behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub queue: u32,
    pub count: u64,
}

/// Deserializes a sequence without reserving what its length prefix declares. serde's `Vec`
/// reserves from the declared length (up to 1 MiB), which a hostile file sets at will: a 3 KB
/// bundle made the reader take a megabyte. Growing as elements arrive keeps the memory in step
/// with the bytes actually read, each element taking at least one.
fn vec_as_read<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Elements<T>(core::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Elements<T> {
        type Value = Vec<T>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Vec<T>, A::Error> {
            let mut elements = Vec::new();
            while let Some(element) = sequence.next_element()? {
                elements.push(element);
            }
            Ok(elements)
        }
    }

    deserializer.deserialize_seq(Elements(core::marker::PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_object_hash_is_sha256_shown_and_parsed_as_hex() {
        let hash = CodeObjectHash::of(b"abc");
        assert_eq!(hash.to_string(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(parse_hex_hash(&hash.to_string()), Some(hash));
        assert_eq!(parse_hex_hash("ba78"), None);
        assert_eq!(parse_hex_hash(&"zz".repeat(32)), None);
        assert_eq!(parse_hex_hash(&"+f".repeat(32)), None);
        let json = serde_json::to_string(&hash).unwrap();
        assert_eq!(serde_json::from_str::<CodeObjectHash>(&json).unwrap(), hash);
    }
}
