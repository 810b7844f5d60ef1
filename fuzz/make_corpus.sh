#!/usr/bin/env bash
# Builds the seed corpora from the shipped files into OUT/<target>/ (default build-fuzz/corpus/seeds):
#   kernel    kernels_ir/lib/*.kir, and the kernels written inline in tests/ and docs/ (when python3 is there)
#   tpu       kernels_ir/lib/tpu_*.kir, and inline tpu_kernels from tests/ and docs/
#   config    hw_configs/*.yaml (a `base:` file follows after `#%base`), a few with `#%set` overrides
#   workload  kernels_ir/workloads/*.yaml, each elementwise `expr:` alone (`#expr`), one with `#param`
#   and tests/bad_inputs/{kernels,workloads,configs}/ for the matching targets
# Generated, never committed: the shipped files are the source of truth.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/build-fuzz/corpus/seeds}"
rm -rf "$out"
mkdir -p "$out"/{kernel,tpu,config,workload}

for f in "$root"/kernels_ir/lib/*.kir; do
  cp "$f" "$out/kernel/$(basename "$f")"
  if grep -q '^tpu_kernel' "$f"; then cp "$f" "$out/tpu/$(basename "$f")"; fi
done

for f in "$root"/hw_configs/*.yaml; do
  name=$(basename "$f" .yaml)
  base=$(sed -n 's/^base:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$f")
  if [ -n "$base" ]; then
    { sed 's/^base:.*/base: base.yaml/' "$f"; echo '#%base'; cat "$root/hw_configs/$base"; } > "$out/config/$name.yaml"
  else
    cp "$f" "$out/config/$name.yaml"
  fi
done
{ cat "$root/hw_configs/teach-tiny.yaml" | sed 's/^base:.*/base: base.yaml/'; echo '#%base'
  cat "$root/hw_configs/a100-40gb.yaml"; echo '#%set'; echo 'sm.count=4'; echo 'l2.size_bytes=1048576'
  echo 'clocks.sm_mhz=1000'; } > "$out/config/teach-tiny-set.yaml"
{ cat "$root/hw_configs/tpu-v5e.yaml"; echo '#%set'; echo 'name=x'; } > "$out/config/tpu-v5e-set.yaml"

for f in "$root"/kernels_ir/workloads/*.yaml; do
  cp "$f" "$out/workload/$(basename "$f")"
  { grep -o 'expr: "[^"]*"' "$f" || true; } | sed 's/^expr: "//; s/"$//' | while read -r e; do
    printf '#expr\n%s' "$e" > "$out/workload/expr-$(printf '%s' "$e" | cksum | cut -d' ' -f1)"
  done
done
{ echo '#param n=2^20'; cat "$root/kernels_ir/workloads/fusion_sincos.yaml"; } > "$out/workload/param-fusion_sincos.yaml"

# The bad inputs the CLI tests check (tests/bad_inputs/<kind>/), where they exist.
bad="$root/tests/bad_inputs"
for f in "$bad"/kernels/*.kir; do
  [ -f "$f" ] || continue
  if grep -q 'tpu_kernel' "$f"; then cp "$f" "$out/tpu/bad-$(basename "$f")"; fi
  cp "$f" "$out/kernel/bad-$(basename "$f")"
done
for f in "$bad"/workloads/*.yaml; do if [ -f "$f" ]; then cp "$f" "$out/workload/bad-$(basename "$f")"; fi; done
for f in "$bad"/configs/*.yaml; do if [ -f "$f" ]; then cp "$f" "$out/config/bad-$(basename "$f")"; fi; done

# Inline examples of the tests (raw strings R"(...)"), by what they look like.
if command -v python3 > /dev/null; then
  python3 - "$root" "$out" <<'PY'
import hashlib, pathlib, re, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
raw = re.compile(r'R"([A-Za-z_]{0,16})\((.*?)\)\1"', re.S)
for src in sorted(root.glob("tests/*/*.cpp")):
    for m in raw.finditer(src.read_text(errors="replace")):
        text = m.group(2)
        if re.search(r"^\s*tpu_kernel\s", text, re.M):
            kind = "tpu"
        elif re.search(r"^\s*kernel\s", text, re.M):
            kind = "kernel"
        elif re.search(r"^\s*ops:", text, re.M):
            kind = "workload"
        elif re.search(r"^\s*[a-z_]+:", text, re.M):
            kind = "config"
        else:
            continue
        name = f"{src.stem}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"
        (out / kind / name).write_text(text)
    # one-line kernels: "tpu_kernel t() {\n ...}" (adjacent literals joined)
    for m in re.finditer(r'((?:"(?:[^"\\\n]|\\.)*"\s*)+)', src.read_text(errors="replace")):
        parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(1))
        text = "".join(parts).encode().decode("unicode_escape", errors="replace")
        kind = "tpu" if text.startswith("tpu_kernel ") else "kernel" if text.startswith("kernel ") else None
        if kind and "\n" in text:
            name = f"{src.stem}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"
            (out / kind / name).write_text(text)
# fenced examples of the docs
for md in sorted(root.glob("docs/*.md")):
    for m in re.finditer(r"```[a-z]*\n(.*?)```", md.read_text(errors="replace"), re.S):
        text = m.group(1)
        kind = ("tpu" if re.search(r"^tpu_kernel\s", text, re.M) else
                "kernel" if re.search(r"^kernel\s", text, re.M) else None)
        if kind:
            name = f"{md.stem}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"
            (out / kind / name).write_text(text)
PY
fi
for t in kernel tpu config workload; do echo "seeds: $t $(ls "$out/$t" | wc -l) files"; done
