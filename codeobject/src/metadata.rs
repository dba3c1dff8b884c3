//! The NT_AMDGPU_METADATA MessagePack document: `amdhsa.version`,
//! `amdhsa.target` and the `amdhsa.kernels` list.

use std::fmt;

use rmpv::ValueRef;

/// Nesting limit for MessagePack decoding; real metadata is 4 levels deep.
const MAX_NESTING: usize = 32;

/// The decoded metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version`: `[major, minor]`.
    pub version: (u32, u32),
    /// `amdhsa.target`: the full ISA name, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub target: String,
    /// `amdhsa.kernels`, in document order.
    pub kernels: Vec<KernelMetadata>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMetadata {
    /// `.name`: the source-level kernel name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol (`<name>.kd`).
    pub symbol: String,
    /// `.kernarg_segment_size`: bytes of the kernarg segment, hidden arguments included.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`: alignment of the kernarg segment in bytes (a power of two).
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size`: bytes of group (LDS) memory each work-group
    /// needs, not counting dynamically allocated group memory.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`: bytes of private (scratch) memory each
    /// work-item needs, not counting a dynamic call stack.
    pub private_segment_fixed_size: u32,
    /// `.wavefront_size`: 32 or 64.
    pub wavefront_size: u32,
    /// `.sgpr_count`: scalar registers each wavefront uses.
    pub sgpr_count: u32,
    /// `.vgpr_count`: vector registers each work-item uses.
    pub vgpr_count: u32,
    /// `.max_flat_workgroup_size`: the most work-items a work-group may have.
    pub max_flat_workgroup_size: u32,
    /// `.reqd_workgroup_size`: the work-group size every dispatch must use, if given.
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// `.workgroup_size_hint`: the work-group size the kernel was tuned for, if given.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// `.args`, in kernarg order as the document lists them.
    pub args: Vec<KernelArg>,
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// `.name`: the source-level argument name, if given.
    pub name: Option<String>,
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Byte size in the kernarg segment.
    pub size: u32,
    /// `.value_kind`: what the argument holds.
    pub value_kind: ValueKind,
    /// `.address_space`: where a pointer argument points, if given.
    pub address_space: Option<AddressSpace>,
    /// `.access`: the access qualifier declared in source, if given.
    pub access: Option<Access>,
    /// `.actual_access`: the access the compiled kernel actually makes, if given.
    pub actual_access: Option<Access>,
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)* } $($other:ident)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant,)*
            $(
                /// A kind this crate does not know yet, kept verbatim.
                $other(String),
            )?
        }

        impl $name {
            /// The metadata spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $text,)*
                    $(Self::$other(text) => text,)?
                }
            }

            fn from_known(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// `.value_kind` of a kernel argument.
    ValueKind {
        /// The value itself, copied into the kernarg segment.
        ByValue = "by_value",
        /// A pointer to a buffer in global memory.
        GlobalBuffer = "global_buffer",
        /// A pointer to dynamically allocated group (LDS) memory.
        DynamicSharedPointer = "dynamic_shared_pointer",
        /// An OpenCL sampler.
        Sampler = "sampler",
        /// An OpenCL image.
        Image = "image",
        /// An OpenCL pipe.
        Pipe = "pipe",
        /// An OpenCL device-enqueue queue.
        Queue = "queue",
        /// The grid's global offset in X (OpenCL).
        HiddenGlobalOffsetX = "hidden_global_offset_x",
        /// The grid's global offset in Y (OpenCL).
        HiddenGlobalOffsetY = "hidden_global_offset_y",
        /// The grid's global offset in Z (OpenCL).
        HiddenGlobalOffsetZ = "hidden_global_offset_z",
        /// Unused space the kernel does not read.
        HiddenNone = "hidden_none",
        /// A pointer to the runtime's printf buffer.
        HiddenPrintfBuffer = "hidden_printf_buffer",
        /// A pointer to the runtime's hostcall buffer.
        HiddenHostcallBuffer = "hidden_hostcall_buffer",
        /// The default queue for device enqueue (OpenCL).
        HiddenDefaultQueue = "hidden_default_queue",
        /// The completion action for device enqueue (OpenCL).
        HiddenCompletionAction = "hidden_completion_action",
        /// A pointer to the multi-grid synchronization state.
        HiddenMultigridSyncArg = "hidden_multigrid_sync_arg",
        /// Whole work-groups in X: grid size divided by work-group size.
        HiddenBlockCountX = "hidden_block_count_x",
        /// Whole work-groups in Y: grid size divided by work-group size.
        HiddenBlockCountY = "hidden_block_count_y",
        /// Whole work-groups in Z: grid size divided by work-group size.
        HiddenBlockCountZ = "hidden_block_count_z",
        /// The work-group size in X.
        HiddenGroupSizeX = "hidden_group_size_x",
        /// The work-group size in Y.
        HiddenGroupSizeY = "hidden_group_size_y",
        /// The work-group size in Z.
        HiddenGroupSizeZ = "hidden_group_size_z",
        /// The size of the partial last work-group in X (grid size modulo work-group size).
        HiddenRemainderX = "hidden_remainder_x",
        /// The size of the partial last work-group in Y (grid size modulo work-group size).
        HiddenRemainderY = "hidden_remainder_y",
        /// The size of the partial last work-group in Z (grid size modulo work-group size).
        HiddenRemainderZ = "hidden_remainder_z",
        /// The number of grid dimensions (1, 2 or 3).
        HiddenGridDims = "hidden_grid_dims",
        /// A pointer to the device-side heap (device `malloc`).
        HiddenHeapV1 = "hidden_heap_v1",
        /// Bytes of dynamically allocated group (LDS) memory.
        HiddenDynamicLdsSize = "hidden_dynamic_lds_size",
        /// The high 32 bits of the flat address of the private aperture.
        HiddenPrivateBase = "hidden_private_base",
        /// The high 32 bits of the flat address of the group (LDS) aperture.
        HiddenSharedBase = "hidden_shared_base",
        /// A pointer to the AQL queue that dispatched the kernel.
        HiddenQueuePtr = "hidden_queue_ptr",
    } Other
}

impl ValueKind {
    /// Parses a `.value_kind` string; unknown kinds become [`ValueKind::Other`].
    pub fn parse(text: &str) -> ValueKind {
        Self::from_known(text).unwrap_or_else(|| ValueKind::Other(text.to_owned()))
    }

    /// Whether the runtime (not the caller) fills this argument.
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }
}

string_enum! {
    /// `.address_space` of a pointer argument.
    AddressSpace {
        /// Global memory.
        Global = "global",
        /// Read-only global memory.
        Constant = "constant",
        /// Group (LDS) memory shared by a work-group.
        Local = "local",
        /// Per-work-item private (scratch) memory.
        Private = "private",
        /// The flat address space, covering the others.
        Generic = "generic",
        /// Region (GDS) memory shared by the whole device.
        Region = "region",
    }
}

string_enum! {
    /// `.access` / `.actual_access` of an argument.
    Access {
        /// Only read.
        ReadOnly = "read_only",
        /// Only written.
        WriteOnly = "write_only",
        /// Read and written.
        ReadWrite = "read_write",
    }
}

/// Where in the document an error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The top-level map.
    Root,
    /// A kernel, by name when it could be read, else by index.
    Kernel(KernelRef),
    /// An argument of a kernel.
    Arg {
        /// The kernel.
        kernel: KernelRef,
        /// The argument's position in `.args`.
        index: usize,
    },
}

/// Names a kernel in an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelRef {
    /// Position in `amdhsa.kernels`, when the kernel's `.name` could not be read.
    Index(usize),
    /// The kernel's `.name`.
    Name(String),
}

impl fmt::Display for KernelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelRef::Index(index) => write!(f, "kernel #{index}"),
            KernelRef::Name(name) => write!(f, "kernel `{name}`"),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Root => f.write_str("metadata"),
            Location::Kernel(kernel) => kernel.fmt(f),
            Location::Arg { kernel, index } => write!(f, "{kernel} argument {index}"),
        }
    }
}

/// A borrowed [`Location`], made owned only when an error is reported, so
/// the happy path allocates nothing for error context.
#[derive(Clone, Copy)]
enum Here<'x> {
    Root,
    KernelIndex(usize),
    Kernel(&'x str),
    Arg { kernel: &'x str, index: usize },
}

impl Here<'_> {
    fn to_location(self) -> Location {
        match self {
            Here::Root => Location::Root,
            Here::KernelIndex(index) => Location::Kernel(KernelRef::Index(index)),
            Here::Kernel(name) => Location::Kernel(KernelRef::Name(name.to_owned())),
            Here::Arg { kernel, index } => Location::Arg { kernel: KernelRef::Name(kernel.to_owned()), index },
        }
    }
}

/// Why a metadata document was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The note is not a valid MessagePack document (or nests too deeply); holds the decoder's message.
    #[error("invalid MessagePack: {0}")]
    MessagePack(String),
    #[error("{location}: expected a map")]
    /// The root, a kernel or an argument is not a map.
    NotAMap {
        /// Where.
        location: Location,
    },
    #[error("{location}: map key is not a string")]
    /// A map has a key that is not a UTF-8 string.
    NonStringKey {
        /// Where.
        location: Location,
    },
    #[error("{location}: duplicate key `{key}`")]
    /// A map has the same key twice.
    DuplicateKey {
        /// Where.
        location: Location,
        /// The repeated key.
        key: String,
    },
    #[error("{location}: missing required field `{field}`")]
    /// A required field is absent.
    MissingField {
        /// Where.
        location: Location,
        /// The field's key, e.g. `.symbol`.
        field: &'static str,
    },
    #[error("{location}: field `{field}` is not {expected}")]
    /// A field's value has the wrong type (or an integer is out of `u32` range).
    WrongType {
        /// Where.
        location: Location,
        /// The field's key.
        field: &'static str,
        /// What the value should be, e.g. `"an array"`.
        expected: &'static str,
    },
    #[error("{location}: field `{field}` has unknown value `{value}`")]
    /// An `.address_space`, `.access` or `.actual_access` string is not a known value.
    UnknownValue {
        /// Where.
        location: Location,
        /// The field's key.
        field: &'static str,
        /// The value found.
        value: String,
    },
    #[error("{kernel}: symbol `{symbol}` does not end in `.kd`")]
    /// A kernel's `.symbol` does not end in `.kd`.
    SymbolNotKernelDescriptor {
        /// The kernel.
        kernel: KernelRef,
        /// The `.symbol` found.
        symbol: String,
    },
    #[error("{kernel}: kernarg segment alignment {align} is not a power of two")]
    /// A kernel's `.kernarg_segment_align` is not a power of two.
    KernargAlignNotPowerOfTwo {
        /// The kernel.
        kernel: KernelRef,
        /// The alignment found.
        align: u32,
    },
    #[error("{kernel}: wavefront size {size} is not 32 or 64")]
    /// A kernel's `.wavefront_size` is not 32 or 64.
    InvalidWavefrontSize {
        /// The kernel.
        kernel: KernelRef,
        /// The size found.
        size: u32,
    },
    #[error(
        "{kernel} argument {index}: bytes {offset}..{offset}+{size} lie outside the \
         {kernarg_segment_size}-byte kernarg segment"
    )]
    /// An argument's bytes extend past the end of the kernarg segment.
    ArgOutsideKernarg {
        /// The kernel.
        kernel: KernelRef,
        /// The argument's position in `.args`.
        index: usize,
        /// The argument's `.offset`.
        offset: u32,
        /// The argument's `.size`.
        size: u32,
        /// The kernel's `.kernarg_segment_size`.
        kernarg_segment_size: u32,
    },
    /// Two kernels have the same `.symbol`; holds the symbol.
    #[error("two kernels use the symbol `{0}`")]
    DuplicateKernel(String),
}

/// Decodes and validates an NT_AMDGPU_METADATA note descriptor.
pub fn parse_metadata(bytes: &[u8]) -> Result<Metadata, MetadataError> {
    let mut reader = bytes;
    let document = rmpv::decode::read_value_ref_with_max_depth(&mut reader, MAX_NESTING)
        .map_err(|error| MetadataError::MessagePack(error.to_string()))?;
    let root = Fields::new(&document, Here::Root)?;

    let version_values = root.required("amdhsa.version")?;
    let version = match fixed_u32_array::<2>(version_values) {
        Some([major, minor]) => (major, minor),
        None => return Err(root.wrong_type("amdhsa.version", "an array of two integers")),
    };
    let target = root.string("amdhsa.target")?.to_owned();

    let mut kernels = Vec::new();
    if let Some(list) = root.optional("amdhsa.kernels") {
        let ValueRef::Array(list) = list else {
            return Err(root.wrong_type("amdhsa.kernels", "an array"));
        };
        kernels.reserve(list.len());
        for (index, kernel) in list.iter().enumerate() {
            kernels.push(parse_kernel(kernel, index)?);
        }
    }

    let mut symbols: Vec<&str> = kernels.iter().map(|k| k.symbol.as_str()).collect();
    symbols.sort_unstable();
    if let Some(pair) = symbols.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(MetadataError::DuplicateKernel(pair[0].to_owned()));
    }

    Ok(Metadata { version, target, kernels })
}

fn parse_kernel(value: &ValueRef<'_>, index: usize) -> Result<KernelMetadata, MetadataError> {
    // Name the kernel in errors as soon as possible, even for errors found
    // while indexing its map (duplicate keys).
    let early_name = match value {
        ValueRef::Map(pairs) => pairs.iter().find_map(|(key, value)| match (key, value) {
            (ValueRef::String(key), ValueRef::String(name)) if key.as_str() == Some(".name") => name.as_str(),
            _ => None,
        }),
        _ => None,
    };
    let here = early_name.map_or(Here::KernelIndex(index), Here::Kernel);
    let fields = Fields::new(value, here)?;
    let name = fields.string(".name")?;
    let fields = fields.relocated(Here::Kernel(name));
    let kernel = || KernelRef::Name(name.to_owned());

    let symbol = fields.string(".symbol")?.to_owned();
    if !symbol.ends_with(".kd") {
        return Err(MetadataError::SymbolNotKernelDescriptor { kernel: kernel(), symbol });
    }
    let kernarg_segment_size = fields.u32(".kernarg_segment_size")?;
    let kernarg_segment_align = fields.u32(".kernarg_segment_align")?;
    if !kernarg_segment_align.is_power_of_two() {
        return Err(MetadataError::KernargAlignNotPowerOfTwo { kernel: kernel(), align: kernarg_segment_align });
    }
    let wavefront_size = fields.u32(".wavefront_size")?;
    if wavefront_size != 32 && wavefront_size != 64 {
        return Err(MetadataError::InvalidWavefrontSize { kernel: kernel(), size: wavefront_size });
    }

    let mut args = Vec::new();
    if let Some(list) = fields.optional(".args") {
        let ValueRef::Array(list) = list else {
            return Err(fields.wrong_type(".args", "an array"));
        };
        args.reserve(list.len());
        for (index, arg) in list.iter().enumerate() {
            let arg = parse_arg(arg, Here::Arg { kernel: name, index })?;
            let end = u64::from(arg.offset) + u64::from(arg.size);
            if end > u64::from(kernarg_segment_size) {
                return Err(MetadataError::ArgOutsideKernarg {
                    kernel: kernel(),
                    index,
                    offset: arg.offset,
                    size: arg.size,
                    kernarg_segment_size,
                });
            }
            args.push(arg);
        }
    }

    Ok(KernelMetadata {
        symbol,
        kernarg_segment_size,
        kernarg_segment_align,
        group_segment_fixed_size: fields.u32(".group_segment_fixed_size")?,
        private_segment_fixed_size: fields.u32(".private_segment_fixed_size")?,
        wavefront_size,
        sgpr_count: fields.u32(".sgpr_count")?,
        vgpr_count: fields.u32(".vgpr_count")?,
        max_flat_workgroup_size: fields.u32(".max_flat_workgroup_size")?,
        reqd_workgroup_size: fields.optional_dims(".reqd_workgroup_size")?,
        workgroup_size_hint: fields.optional_dims(".workgroup_size_hint")?,
        args,
        name: name.to_owned(),
    })
}

fn parse_arg(value: &ValueRef<'_>, here: Here<'_>) -> Result<KernelArg, MetadataError> {
    let fields = Fields::new(value, here)?;
    Ok(KernelArg {
        name: fields.optional_string(".name")?.map(str::to_owned),
        offset: fields.u32(".offset")?,
        size: fields.u32(".size")?,
        value_kind: ValueKind::parse(fields.string(".value_kind")?),
        address_space: fields.optional_enum(".address_space", AddressSpace::from_known)?,
        access: fields.optional_enum(".access", Access::from_known)?,
        actual_access: fields.optional_enum(".actual_access", Access::from_known)?,
    })
}

fn fixed_u32_array<const N: usize>(value: &ValueRef<'_>) -> Option<[u32; N]> {
    let ValueRef::Array(items) = value else {
        return None;
    };
    if items.len() != N {
        return None;
    }
    let mut out = [0u32; N];
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = as_u32(item)?;
    }
    Some(out)
}

fn as_u32(value: &ValueRef<'_>) -> Option<u32> {
    match value {
        ValueRef::Integer(integer) => integer.as_u64().and_then(|v| u32::try_from(v).ok()),
        _ => None,
    }
}

/// The string-keyed entries of one map, sorted by key for lookup, with
/// duplicates rejected (MessagePack maps may repeat keys; rmpv keeps all).
struct Fields<'v, 'a, 'x> {
    entries: Vec<(&'v str, &'v ValueRef<'a>)>,
    here: Here<'x>,
}

impl<'v, 'a, 'x> Fields<'v, 'a, 'x> {
    fn new(value: &'v ValueRef<'a>, here: Here<'x>) -> Result<Self, MetadataError> {
        let ValueRef::Map(pairs) = value else {
            return Err(MetadataError::NotAMap { location: here.to_location() });
        };
        let mut entries = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            let key = match key {
                ValueRef::String(key) => key.as_str(),
                _ => None,
            };
            let Some(key) = key else {
                return Err(MetadataError::NonStringKey { location: here.to_location() });
            };
            entries.push((key, value));
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        if let Some(pair) = entries.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(MetadataError::DuplicateKey { location: here.to_location(), key: pair[0].0.to_owned() });
        }
        Ok(Fields { entries, here })
    }

    fn relocated<'y>(self, here: Here<'y>) -> Fields<'v, 'a, 'y> {
        Fields { entries: self.entries, here }
    }

    fn optional(&self, field: &str) -> Option<&'v ValueRef<'a>> {
        self.entries
            .binary_search_by(|entry| entry.0.cmp(field))
            .ok()
            .and_then(|index| self.entries.get(index))
            .map(|entry| entry.1)
    }

    fn required(&self, field: &'static str) -> Result<&'v ValueRef<'a>, MetadataError> {
        self.optional(field).ok_or_else(|| MetadataError::MissingField { location: self.here.to_location(), field })
    }

    fn wrong_type(&self, field: &'static str, expected: &'static str) -> MetadataError {
        MetadataError::WrongType { location: self.here.to_location(), field, expected }
    }

    fn u32(&self, field: &'static str) -> Result<u32, MetadataError> {
        as_u32(self.required(field)?).ok_or_else(|| self.wrong_type(field, "an unsigned 32-bit integer"))
    }

    fn string(&self, field: &'static str) -> Result<&'v str, MetadataError> {
        self.optional_string(field)?
            .ok_or_else(|| MetadataError::MissingField { location: self.here.to_location(), field })
    }

    fn optional_string(&self, field: &'static str) -> Result<Option<&'v str>, MetadataError> {
        match self.optional(field) {
            None => Ok(None),
            Some(ValueRef::String(text)) => {
                text.as_str().map(Some).ok_or_else(|| self.wrong_type(field, "a UTF-8 string"))
            }
            Some(_) => Err(self.wrong_type(field, "a string")),
        }
    }

    fn optional_enum<T>(&self, field: &'static str, parse: fn(&str) -> Option<T>) -> Result<Option<T>, MetadataError> {
        let Some(text) = self.optional_string(field)? else {
            return Ok(None);
        };
        parse(text).map(Some).ok_or_else(|| MetadataError::UnknownValue {
            location: self.here.to_location(),
            field,
            value: text.to_owned(),
        })
    }

    fn optional_dims(&self, field: &'static str) -> Result<Option<[u32; 3]>, MetadataError> {
        match self.optional(field) {
            None => Ok(None),
            Some(value) => fixed_u32_array::<3>(value)
                .map(Some)
                .ok_or_else(|| self.wrong_type(field, "an array of three integers")),
        }
    }
}
