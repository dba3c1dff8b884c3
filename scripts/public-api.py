#!/usr/bin/env python3
"""The public API of the crates a user holds, one line per item, from rustdoc's JSON.

Writes docs/public-api/<crate>.txt, checked in so that a change to the API shows in review
(issue 56). `--check` regenerates into memory and fails if a checked-in file differs.

rustdoc's JSON output is unstable: RUSTC_BOOTSTRAP=1 enables it on the stable toolchain, and the
format version it was written against is FORMAT_VERSION below. A new toolchain that changes the
format fails loudly here rather than writing a wrong listing.

A line is the item's kind, its public path, and for functions and methods their signature; a
re-export of another crate's item is listed as `use path = origin`, since rustdoc does not
document that item in this crate's JSON.
"""

import json
import os
import subprocess
import sys

CRATES = ["aqueduct-engine", "aqueduct-bevy"]
FORMAT_VERSION = 57
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rustdoc_json(crate):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    subprocess.run(
        ["cargo", "rustdoc", "-q", "-p", crate, "--lib", "--", "-Z", "unstable-options", "--output-format", "json"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    with open(os.path.join(target, "doc", crate.replace("-", "_") + ".json")) as file:
        doc = json.load(file)
    if doc["format_version"] != FORMAT_VERSION:
        sys.exit(f"public-api: rustdoc JSON format {doc['format_version']}, this script reads {FORMAT_VERSION}")
    return doc


class Lister:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.paths = doc["paths"]
        self.lines = []
        # Item id -> the public paths it is reachable at.
        self.sites = {}

    def path_of(self, item_id):
        entry = self.paths.get(str(item_id))
        return "::".join(entry["path"]) if entry else f"<{item_id}>"

    def ty(self, t):
        """A type, written as Rust source writes it (enough to see a change)."""
        if t is None:
            return "()"
        (kind, value), = t.items()
        if kind == "resolved_path":
            return value["path"] + self.generic_args(value.get("args"))
        if kind == "primitive":
            return value
        if kind == "generic":
            return value
        if kind == "borrowed_ref":
            life = f"{value['lifetime']} " if value.get("lifetime") else ""
            return f"&{life}{'mut ' if value['is_mutable'] else ''}{self.ty(value['type'])}"
        if kind == "raw_pointer":
            return f"*{'mut' if value['is_mutable'] else 'const'} {self.ty(value['type'])}"
        if kind == "slice":
            return f"[{self.ty(value)}]"
        if kind == "array":
            return f"[{self.ty(value['type'])}; {value['len']}]"
        if kind == "tuple":
            return "(" + ", ".join(self.ty(inner) for inner in value) + ")"
        if kind == "impl_trait":
            return "impl " + " + ".join(self.bound(bound) for bound in value)
        if kind == "dyn_trait":
            return "dyn " + " + ".join(self.poly_trait(trait) for trait in value["traits"])
        if kind == "qualified_path":
            trait = value.get("trait")
            base = self.ty(value["self_type"])
            if trait and trait["path"]:
                return f"<{base} as {trait['path']}>::{value['name']}"
            return f"{base}::{value['name']}"
        if kind == "function_pointer":
            sig = value["sig"]
            inputs = ", ".join(self.ty(input_type) for _, input_type in sig["inputs"])
            return f"fn({inputs}) -> {self.ty(sig['output'])}"
        return kind

    def generic_args(self, args):
        if not args or "angle_bracketed" not in args:
            if args and "parenthesized" in args:
                value = args["parenthesized"]
                inputs = ", ".join(self.ty(input_type) for input_type in value["inputs"])
                return f"({inputs}) -> {self.ty(value['output'])}"
            return ""
        parts = []
        for arg in args["angle_bracketed"]["args"]:
            (kind, value), = arg.items() if isinstance(arg, dict) else (("lifetime", arg),)
            if kind == "type":
                parts.append(self.ty(value))
            elif kind == "lifetime":
                parts.append(value)
            elif kind == "const":
                parts.append(value.get("expr", "_"))
        for constraint in args["angle_bracketed"].get("constraints", []):
            binding = constraint.get("binding", {})
            if "equality" in binding and "type" in binding["equality"]:
                parts.append(f"{constraint['name']} = {self.ty(binding['equality']['type'])}")
        return "<" + ", ".join(parts) + ">" if parts else ""

    def poly_trait(self, poly):
        trait = poly["trait"]
        return trait["path"] + self.generic_args(trait.get("args"))

    def bound(self, bound):
        if "trait_bound" in bound:
            return self.poly_trait(bound["trait_bound"])
        if "outlives" in bound:
            return bound["outlives"]
        return "?"

    def signature(self, function):
        sig = function["sig"]
        header = function.get("header", {})
        words = []
        if header.get("is_const"):
            words.append("const")
        if header.get("is_unsafe"):
            words.append("unsafe")
        inputs = []
        for name, input_type in sig["inputs"]:
            written = self.ty(input_type)
            if name == "self" and written.endswith("Self"):
                inputs.append(written[: -len("Self")] + "self")
            else:
                inputs.append(f"{name}: {written}")
        params = [
            p["name"]
            for p in function["generics"]["params"]
            if "type" in p["kind"] and not p["kind"]["type"].get("is_synthetic")
        ]
        generics = "<" + ", ".join(params) + ">" if params else ""
        output = sig.get("output")
        arrow = f" -> {self.ty(output)}" if output is not None else ""
        return " ".join(words + [f"fn{generics}(" + ", ".join(inputs) + f"){arrow}"])

    def emit(self, kind, path, detail=""):
        self.lines.append(f"{kind} {path}{(' ' + detail) if detail else ''}")

    def impls(self, owner, path):
        for impl_id in owner.get("impls", []):
            impl = self.index[str(impl_id)]["inner"]["impl"]
            if impl.get("is_synthetic") or impl.get("blanket_impl"):
                continue
            trait = impl.get("trait")
            if trait is not None:
                self.emit("impl", path, ": " + trait["path"] + self.generic_args(trait.get("args")))
                continue
            for item_id in impl["items"]:
                item = self.index[str(item_id)]
                if item["visibility"] != "public":
                    continue
                (kind, inner), = item["inner"].items()
                if kind == "function":
                    self.emit("fn", f"{path}::{item['name']}", self.signature(inner))
                elif kind == "assoc_const":
                    self.emit("const", f"{path}::{item['name']}", ": " + self.ty(inner["type"]))

    def walk(self, module_id, path, seen):
        if module_id in seen:
            return
        seen.add(module_id)
        for item_id in self.index[str(module_id)]["inner"]["module"]["items"]:
            item = self.index[str(item_id)]
            if item["visibility"] != "public" or item["attrs"] and any("doc(hidden)" in str(a) for a in item["attrs"]):
                continue
            (kind, inner), = item["inner"].items()
            name = item.get("name")
            here = f"{path}::{name}" if name else path
            if kind == "use":
                target = inner.get("id")
                local = target is not None and str(target) in self.index
                if local and "module" in self.index[str(target)]["inner"]:
                    if inner["is_glob"]:
                        self.walk(target, path, seen)
                    else:
                        self.walk(target, f"{path}::{inner['name']}", seen)
                elif local:
                    self.sites.setdefault(target, []).append(f"{path}::{inner['name']}")
                else:
                    origin = self.path_of(target) if target is not None else inner["source"]
                    glob = "::*" if inner["is_glob"] else ""
                    self.emit("use", f"{path}::{inner['name']}{glob}", "= " + origin + glob)
            elif kind == "module":
                self.emit("mod", here)
                self.walk(item_id, here, seen)
            else:
                self.sites.setdefault(item_id, []).append(here)

    def finish(self, seen):
        """Each item is listed at its shortest public path; its other paths are `use` lines."""
        for item_id, sites in self.sites.items():
            sites = sorted(set(sites), key=lambda site: (site.count("::"), site))
            self.item(self.index[str(item_id)], sites[0], seen)
            for other in sites[1:]:
                self.emit("use", other, "= " + sites[0])

    def item(self, item, path, seen):
        (kind, inner), = item["inner"].items()
        if kind == "function":
            self.emit("fn", path, self.signature(inner))
        elif kind == "struct":
            fields = inner["kind"].get("plain", {}).get("fields", []) if isinstance(inner["kind"], dict) else []
            self.emit("struct", path)
            for field_id in fields:
                field = self.index[str(field_id)]
                if field["visibility"] == "public":
                    self.emit("field", f"{path}::{field['name']}", ": " + self.ty(field["inner"]["struct_field"]))
            self.impls(inner, path)
        elif kind == "enum":
            self.emit("enum", path)
            for variant_id in inner["variants"]:
                self.emit("variant", f"{path}::{self.index[str(variant_id)]['name']}")
            self.impls(inner, path)
        elif kind == "trait":
            self.emit("trait", path)
            for member_id in inner["items"]:
                member = self.index[str(member_id)]
                (member_kind, member_inner), = member["inner"].items()
                detail = self.signature(member_inner) if member_kind == "function" else ""
                self.emit(f"trait-{member_kind}", f"{path}::{member['name']}", detail)
        elif kind == "constant":
            self.emit("const", path, ": " + self.ty(inner["type"]))
        elif kind == "static":
            self.emit("static", path, ": " + self.ty(inner["type"]))
        elif kind == "type_alias":
            self.emit("type", path, "= " + self.ty(inner["type"]))
        elif kind == "macro":
            self.emit("macro", path)
        elif kind == "module":
            self.emit("mod", path)
            self.walk(item["id"], path, seen)
        else:
            self.emit(kind, path)


def listing(crate):
    doc = rustdoc_json(crate)
    lister = Lister(doc)
    seen = set()
    lister.walk(doc["root"], crate.replace("-", "_"), seen)
    lister.finish(seen)
    return "\n".join(sorted(set(lister.lines))) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    out = os.path.join(ROOT, "docs", "public-api")
    os.makedirs(out, exist_ok=True)
    stale = []
    for crate in CRATES:
        text = listing(crate)
        file = os.path.join(out, crate + ".txt")
        if check:
            old = open(file).read() if os.path.exists(file) else ""
            if old != text:
                stale.append(crate)
        else:
            with open(file, "w") as handle:
                handle.write(text)
            print(f"public-api: {file}: {text.count(chr(10))} items")
    if stale:
        sys.exit(f"public-api: the public API of {', '.join(stale)} changed; run scripts/public-api.py and commit docs/public-api/")


if __name__ == "__main__":
    main()
