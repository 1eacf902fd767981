"""The .pt2 archive: written atomically, with the ExportedProgram, the AOTInductor compilations,
the converted models' files and extra/aitune.json, the record of what was made.

extra/aitune.json (schema 2), what the C++ reader (torch/model/pt2_archive.hpp) reads:

  schema      2
  torch       the version of PyTorch that exported it
  inputs      [{name, shape, spec, domain}], the program's inputs in order, at the example's
              shapes; domain {min, max, source}: the values an integer input may hold, the rows
              of the embedding it indexes ("embedding") or --domain's ("declared"); a call
              outside them is refused
  dynamic     [{input, axis, min, max, symbol}], the axes exported as a range, with the range
              torch.export proved (its range_constraints); axes with one symbol must agree
  variants    {name: {family, precision, records, shapes, made, ...}}: every variant made. family
              is "aoti" (the compilation under data/aotinductor/<name>/), "onnx" or "openvino"
              (records: its files in the archive, in the order the runtime loads them); shapes is
              "range" (it takes every shape of `dynamic`) or "static" (the example's only); made
              is how it was made (options, converter versions)
  failed      {name: cause}, the variants tried and not made
  out_spec    the program's output structure (pytree treespec_dumps); none_leaves: where its
              None leaves are (converted models return no output for them)
  outputs_converted  {path: what}, the outputs made plain containers
"""
import json
import os

SCHEMA = 2


def write_atomically(path, write, suffix=".pt2"):
    """Calls write(tmp) on a temporary name beside `path`, then renames it to `path`, so a crash
    leaves no half-written file. The name ends in `suffix` (the .pt2 writers insist on it)."""
    tmp = f"{path}.tmp{os.getpid()}{suffix}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def check_names(names):
    """Raises ValueError when one variant name is a prefix of another: LibTorch 2.11's package
    loader finds a compilation's files by prefix."""
    for name in names:
        for other in names:
            if other != name and other.startswith(name):
                raise ValueError(f"the variant name '{name}' is a prefix of '{other}'")


def aitune_json(**fields):
    """extra/aitune.json's text: `fields` under the schema number."""
    return json.dumps({"schema": SCHEMA, **fields})


def package(path, program, compiled, texts, records):
    """package_pt2 with `records` (name -> bytes) added beside its own: its extra_files takes
    text only, and load_pt2 reads every extra/ record as UTF-8, so binary records go elsewhere.
    Both load_pt2 and LibTorch's PyTorchStreamReader ignore records they do not know."""
    from torch.export.pt2_archive import _package

    with _package.PT2ArchiveWriter(path) as writer:
        _package._package_exported_programs(writer, {"model": program})
        _package._package_aoti_files(writer, compiled or None)
        _package._package_extra_files(writer, texts)
        for name, data in records.items():
            writer.write_bytes(name, data)
