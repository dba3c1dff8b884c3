//! Prints what the native tier translates of each kernel in the code objects named on the
//! command line: `cargo run -p aqueduct-isa --example native_report -- FILE.hsaco...`.

use aqueduct_codeobject::CodeObject;
use aqueduct_isa::interp::{DecodedKernel, Isa, Regions, StandaloneImage};
use aqueduct_isa::native;

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
        let isa = if path.contains("gfx103") { Isa::Gfx10_3 } else { Isa::Gfx11 };
        let code_object = CodeObject::parse(&bytes).unwrap_or_else(|error| panic!("{path}: {error}"));
        let image = StandaloneImage::load(&bytes).unwrap_or_else(|error| panic!("{path}: {error}"));
        let memory = Regions(vec![image.range()]);
        for kernel in code_object.kernels() {
            let kernel_object = image.kernel_object(&kernel.name).expect("a kernel descriptor");
            let decoded = DecodedKernel::load_for(&memory, kernel_object, isa).expect("the kernel decodes");
            match native::compiled(&decoded) {
                Ok(code) => println!(
                    "{path} `{}`: {}/{} instructions translated, {} bytes, {:?}; untranslated: {:?}",
                    kernel.name,
                    code.translated,
                    code.instructions,
                    code.code_bytes(),
                    code.compile_time,
                    code.untranslated
                ),
                Err(reason) => println!("{path} `{}`: {reason}", kernel.name),
            }
        }
    }
}
