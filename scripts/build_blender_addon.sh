#!/usr/bin/env bash
# Builds the installable Blender add-on: target/blender/overtone/ (the package with the native
# library in lib/) and target/blender/overtone-<version>-linux-x64.zip (Edit ▸ Preferences ▸
# Get Extensions ▸ Install from Disk, or Add-ons ▸ Install for legacy add-ons).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build_c_abi.sh
rm -rf target/blender/overtone
mkdir -p target/blender/overtone/lib
cp plugin/blender/overtone/*.py plugin/blender/overtone/blender_manifest.toml target/blender/overtone/
cp target/cpp/libovertone_c.so target/blender/overtone/lib/
strip --strip-unneeded target/blender/overtone/lib/libovertone_c.so
cp LICENSE target/blender/overtone/ 2>/dev/null || true
python3 - <<'PY'
import os, tomllib, zipfile
root = "target/blender/overtone"
with open(os.path.join(root, "blender_manifest.toml"), "rb") as f:
    manifest = tomllib.load(f)
for key in ("schema_version", "id", "version", "name", "tagline", "maintainer", "type",
            "blender_version_min", "license"):
    assert key in manifest, f"blender_manifest.toml lacks {key}"
out = f"target/blender/overtone-{manifest['version']}-linux-x64.zip"
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            full = os.path.join(dirpath, name)
            z.write(full, os.path.relpath(full, "target/blender"))
print(out)
PY
