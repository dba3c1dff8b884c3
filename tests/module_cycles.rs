//! No import cycles between the modules of one folder (issue 47): in every crate of the
//! workspace, among the top-level modules and among the files of each module folder, the
//! references form no cycle. And the crates depend on each other only as `ALLOWED_CRATE_EDGES`
//! writes down (issue 56): a new edge fails until the graph here is edited, in review.
//!
//! The modules are read off the file layout (`x.rs`, `x/mod.rs`, `x.rs` beside `x/`), and a
//! reference is a path through `crate::`, `super::` or `self::` in a file's code (comments and
//! its `#[cfg(test)]` module, inline or in a `tests.rs` of its own, are not read; a test may
//! reach anything). A reference from module
//! `a::b::f` to `a::c::g` is an edge `b -> c` among the children of `a`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module: its path from the crate root, and the file that holds it.
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

fn modules(src: &Path) -> Vec<Module> {
    let mut found = vec![Module { path: vec![], file: src.join("lib.rs") }];
    if src.join("main.rs").exists() {
        found[0].file = src.join("main.rs");
    }
    collect(src, &mut vec![], &mut found);
    found.retain(|module| module.file.exists());
    found
}

fn collect(dir: &Path, prefix: &mut Vec<String>, found: &mut Vec<Module>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for entry in entries {
        let name = entry.file_stem().unwrap().to_string_lossy().into_owned();
        if entry.is_dir() {
            prefix.push(name.clone());
            if entry.join("mod.rs").exists() {
                found.push(Module { path: prefix.clone(), file: entry.join("mod.rs") });
            }
            collect(&entry, prefix, found);
            prefix.pop();
        } else if entry.extension().is_some_and(|ext| ext == "rs")
            && !(prefix.is_empty() && (name == "lib" || name == "main"))
            && name != "mod"
            // A `#[cfg(test)] mod tests;` in a file of its own is a test module, as one inline is.
            && name != "tests"
        {
            let mut path = prefix.clone();
            path.push(name);
            found.push(Module { path, file: entry });
        }
    }
}

/// The file's code without comments, literals' contents or its `#[cfg(test)]` module.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let rest = &chars[at..];
        if rest.starts_with(&['/', '/']) {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            at += 2;
            while at < chars.len() && !chars[at..].starts_with(&['*', '/']) {
                at += 1;
            }
            at += 2;
        } else if rest.starts_with(&['r', '#']) || rest.starts_with(&['r', '"']) {
            // A raw string: r"..", r#".."#, and so on.
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            if rest.get(1 + hashes) != Some(&'"') {
                code.push(chars[at]);
                at += 1;
                continue;
            }
            at += 2 + hashes;
            let mut close = vec!['"'];
            close.extend(std::iter::repeat_n('#', hashes));
            while at < chars.len() && !chars[at..].starts_with(&close) {
                at += 1;
            }
            at += close.len();
            code.push_str("\"\"");
        } else if chars[at] == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            code.push_str("\"\"");
        } else if chars[at] == '\'' && (rest.get(1) == Some(&'\\') || rest.get(2) == Some(&'\'')) {
            // A character literal ('"', '\''), not a lifetime.
            at += if rest[1] == '\\' { 2 } else { 1 };
            while at < chars.len() && chars[at] != '\'' {
                at += 1;
            }
            at += 1;
            code.push_str("' '");
        } else {
            code.push(chars[at]);
            at += 1;
        }
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path the code names through `crate::`, `super::` or `self::`, resolved against the
/// module at `own` (whose file is a folder's `mod.rs` or not: `super` is its parent either way),
/// as the segments after the crate root. `use crate::{a, b::c}` names `a` and `b::c`.
fn references(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut at = 0;
    while at < bytes.len() {
        if !is_ident(bytes[at]) || (at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == ':')) {
            at += 1;
            continue;
        }
        // A path's first word.
        let start = at;
        while at < bytes.len() && is_ident(bytes[at]) {
            at += 1;
        }
        let word: String = bytes[start..at].iter().collect();
        let mut base: Vec<String> = match word.as_str() {
            "crate" => vec![],
            "self" => own.to_vec(),
            "super" => own[..own.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut rest = Vec::new();
        let mut cursor = at;
        loop {
            if bytes.get(cursor) != Some(&':') || bytes.get(cursor + 1) != Some(&':') {
                break;
            }
            cursor += 2;
            if bytes.get(cursor) == Some(&'{') {
                let mut depth = 0;
                let mut group = String::new();
                for &c in &bytes[cursor..] {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    group.push(c);
                    if depth == 0 {
                        break;
                    }
                }
                let inner = &group[1..group.len().saturating_sub(1)];
                let mut depth = 0;
                let mut item = String::new();
                for c in inner.chars().chain([',']) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            let mut path = base.clone();
                            path.extend(rest.iter().cloned());
                            path.extend(
                                item.trim()
                                    .split("::")
                                    .map(|segment| segment.trim().to_string())
                                    .take_while(|segment| !segment.is_empty() && segment.chars().all(is_ident)),
                            );
                            found.push(path);
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
                rest.clear();
                base = Vec::new();
                break;
            }
            let segment_start = cursor;
            while cursor < bytes.len() && is_ident(bytes[cursor]) {
                cursor += 1;
            }
            if cursor == segment_start {
                break;
            }
            let segment: String = bytes[segment_start..cursor].iter().collect();
            if segment == "super" && rest.is_empty() {
                base.pop();
            } else {
                rest.push(segment);
            }
        }
        if !rest.is_empty() || !base.is_empty() {
            base.extend(rest);
            found.push(base);
        }
        at = cursor.max(at);
    }
    found
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a str) {
        let next = walk.index.len();
        walk.index.insert(node, next);
        walk.low.insert(node, next);
        walk.stack.push(node);
        walk.on_stack.insert(node);
        for target in walk.graph.get(node).into_iter().flatten() {
            if !walk.index.contains_key(target.as_str()) {
                visit(walk, target);
                let low = walk.low[node].min(walk.low[target.as_str()]);
                walk.low.insert(node, low);
            } else if walk.on_stack.contains(target.as_str()) {
                let low = walk.low[node].min(walk.index[target.as_str()]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut component = Vec::new();
            while let Some(member) = walk.stack.pop() {
                walk.on_stack.remove(member);
                component.push(member.to_string());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                walk.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

/// Per module folder (by its path), the edges among its children.
fn folder_graphs(src: &Path) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let modules = modules(src);
    let known: BTreeSet<Vec<String>> = modules.iter().map(|module| module.path.clone()).collect();
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for module in &modules {
        for mut target in references(&code(&module.file), &module.path) {
            // The longest prefix that is a module: `crate::a::Item` names module `a`.
            while !target.is_empty() && !known.contains(&target) {
                target.pop();
            }
            let from = &module.path;
            let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            // A module reaching into its own descendants or ancestors is not a sibling edge.
            if common == from.len() || common == target.len() {
                continue;
            }
            graphs
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    graphs
}

fn workspace_sources() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest.split("members = [").nth(1).unwrap().split(']').next().unwrap();
    let mut sources = vec![("aqueduct".to_string(), root.join("src"))];
    for member in members.split(',') {
        let member = member.trim().trim_matches('"');
        if !member.is_empty() && root.join(member).join("src").exists() {
            sources.push((member.to_string(), root.join(member).join("src")));
        }
    }
    sources
}

#[test]
fn no_folder_of_any_crate_has_an_import_cycle() {
    let mut report = Vec::new();
    for (krate, src) in workspace_sources() {
        for (folder, graph) in folder_graphs(&src) {
            for cycle in cycles(&graph) {
                let edges: Vec<String> = cycle
                    .iter()
                    .flat_map(|from| {
                        graph[from].iter().filter(|to| cycle.contains(to)).map(move |to| format!("{from} -> {to}"))
                    })
                    .collect();
                report.push(format!("{krate}::{}: {}", folder.join("::"), edges.join(", ")));
            }
        }
    }
    assert!(report.is_empty(), "import cycles:\n{}", report.join("\n"));
}

/// Which workspace crates each crate's `[dependencies]` names (dev- and build-dependencies are
/// not edges: tests may reach anything). Bottom up; the layering it draws:
/// - plain types (`abi`, `codeobject`, `profile`) depend on nothing of ours;
/// - the interpreter (`isa`) sits on code objects only, and only `soft-hsa` depends on it: the
///   function table and ROCr (`hsa`), the pipeline's data and stages (`components`, `systems`)
///   and the device library (`builtins`) never reach the interpreter;
/// - the engine is the first crate that sees both providers; the facade, the CLI and the Bevy
///   plugin sit on it.
const ALLOWED_CRATE_EDGES: &[(&str, &[&str])] = &[
    ("aqueduct-abi", &[]),
    ("aqueduct-codeobject", &[]),
    ("aqueduct-vocabulary", &[]),
    ("aqueduct-profile", &["aqueduct-vocabulary"]),
    ("aqueduct-loom-models", &[]),
    ("aqueduct-isa", &["aqueduct-codeobject"]),
    ("aqueduct-hsa", &["aqueduct-abi", "aqueduct-codeobject"]),
    ("aqueduct-builtins", &["aqueduct-abi", "aqueduct-codeobject"]),
    (
        "aqueduct-soft-hsa",
        &["aqueduct-abi", "aqueduct-builtins", "aqueduct-codeobject", "aqueduct-hsa", "aqueduct-isa"],
    ),
    ("aqueduct-components", &["aqueduct-abi", "aqueduct-vocabulary"]),
    ("aqueduct-systems", &["aqueduct-abi", "aqueduct-builtins", "aqueduct-components", "aqueduct-hsa"]),
    (
        "aqueduct-engine",
        &[
            "aqueduct-abi",
            "aqueduct-builtins",
            "aqueduct-codeobject",
            "aqueduct-components",
            "aqueduct-hsa",
            "aqueduct-profile",
            "aqueduct-soft-hsa",
            "aqueduct-systems",
            "aqueduct-vocabulary",
        ],
    ),
    (
        "aqueduct-cli",
        &[
            "aqueduct-abi",
            "aqueduct-builtins",
            "aqueduct-codeobject",
            "aqueduct-engine",
            "aqueduct-hsa",
            "aqueduct-profile",
            "aqueduct-soft-hsa",
        ],
    ),
    ("aqueduct-bevy", &["aqueduct-engine"]),
    (
        "aqueduct",
        &[
            "aqueduct-abi",
            "aqueduct-cli",
            "aqueduct-codeobject",
            "aqueduct-engine",
            "aqueduct-hsa",
            "aqueduct-profile",
            "aqueduct-soft-hsa",
        ],
    ),
];

/// A manifest's package name and the workspace crates its `[dependencies]` table names.
fn crate_edges(manifest: &str) -> (String, BTreeSet<String>) {
    let mut name = String::new();
    let mut edges = BTreeSet::new();
    let mut table = "";
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line;
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or("");
        if table == "[package]" && key == "name" {
            name = line.split('"').nth(1).unwrap_or("").to_string();
        } else if table == "[dependencies]" && key.starts_with("aqueduct-") {
            edges.insert(key.to_string());
        }
    }
    (name, edges)
}

#[test]
fn the_crates_depend_on_each_other_only_as_written_down() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed: BTreeMap<&str, BTreeSet<String>> = ALLOWED_CRATE_EDGES
        .iter()
        .map(|(name, edges)| (*name, edges.iter().map(|edge| edge.to_string()).collect()))
        .collect();
    let mut report = Vec::new();
    let mut seen = BTreeSet::new();
    let mut manifests = vec![root.join("Cargo.toml")];
    manifests.extend(workspace_sources().iter().skip(1).map(|(member, _)| root.join(member).join("Cargo.toml")));
    for manifest in manifests {
        let (name, edges) = crate_edges(&std::fs::read_to_string(&manifest).unwrap());
        seen.insert(name.clone());
        match allowed.get(name.as_str()) {
            None => report.push(format!("{name} ({}) is not in ALLOWED_CRATE_EDGES", manifest.display())),
            Some(expected) if *expected != edges => report.push(format!(
                "{name}: depends on {:?}; written down: {:?}",
                edges.iter().collect::<Vec<_>>(),
                expected.iter().collect::<Vec<_>>()
            )),
            Some(_) => {}
        }
    }
    for name in allowed.keys().filter(|name| !seen.contains(**name)) {
        report.push(format!("{name} is written down but is no workspace crate"));
    }
    assert!(report.is_empty(), "crate graph:\n{}", report.join("\n"));
}

#[test]
fn the_crate_edge_reader_sees_only_normal_dependencies() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\naqueduct-abi.workspace = true\n\
                    aqueduct-hsa = { workspace = true }\nlibc = \"0.2\"\n[dev-dependencies]\n\
                    aqueduct-isa.workspace = true\n[build-dependencies]\naqueduct-builtins.workspace = true\n";
    let (name, edges) = crate_edges(manifest);
    assert_eq!(name, "x");
    assert_eq!(edges, BTreeSet::from(["aqueduct-abi".to_string(), "aqueduct-hsa".to_string()]));
}

#[test]
fn the_cycle_finder_sees_a_cycle_through_each_kind_of_path() {
    let dir = std::env::temp_dir().join(format!("aqueduct-cycles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(dir.join("a/mod.rs"), "mod x;\nmod y;\n").unwrap();
    // Files of one folder: x -> y through super::, y -> x through crate::a::x in a group.
    std::fs::write(dir.join("a/x.rs"), "use super::y::Thing;\n").unwrap();
    std::fs::write(dir.join("a/y.rs"), "use crate::{a::x::Other, c};\n// crate::b::ignored\n").unwrap();
    // Top level: b -> c, c -> b through a path in code; the test module is not read.
    std::fs::write(dir.join("b.rs"), "fn f() { crate::c::g() }\n").unwrap();
    std::fs::write(
        dir.join("c.rs"),
        "pub fn g() { let _ = crate::b::f; }\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    )
    .unwrap();
    let graphs = folder_graphs(&dir);
    let top = &graphs[&vec![]];
    let inner = &graphs[&vec!["a".to_string()]];
    assert_eq!(cycles(top), vec![vec!["b".to_string(), "c".to_string()]]);
    assert_eq!(cycles(inner), vec![vec!["x".to_string(), "y".to_string()]]);
    // y -> c (top level: a -> c), and nothing from the comment or the test module.
    assert!(top["a"].contains("c"));
    assert!(!top["a"].contains("b"));
    assert!(!top.contains_key("c") || !top["c"].contains("a"));
    std::fs::remove_dir_all(&dir).unwrap();
}
