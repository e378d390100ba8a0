#!/usr/bin/env python3
"""Packs a staged rgpu package folder into a wheel (PEP 427) tagged
py3-none-linux_x86_64; auditwheel then gives it its manylinux tag.

    make_wheel.py STAGE VERSION OUT_DIR

STAGE holds the package folder rgpu/; every file of it goes into the wheel,
with the execute bits it has.
"""
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

TAG = "py3-none-linux_x86_64"


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main() -> None:
    stage, version, out_dir = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    dist_info = f"rgpu-{version}.dist-info"
    metadata = {
        "METADATA": (f"Metadata-Version: 2.1\nName: rgpu\nVersion: {version}\n"
                     "Summary: Remote GPUs for unmodified CUDA programs: the client (rgpu run, rgpu doctor)\n"
                     "License: see the project's LICENSE\nRequires-Python: >=3.8\n"),
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: rgpu make_wheel.py\nRoot-Is-Purelib: false\nTag: {TAG}\n",
        "entry_points.txt": "[console_scripts]\nrgpu = rgpu.__main__:main\n",
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"rgpu-{version}-{TAG}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(p for p in stage.rglob("*") if p.is_file()):
            name = path.relative_to(stage).as_posix()
            data = path.read_bytes()
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(record_line(name, data))
        for file, text in metadata.items():
            name = f"{dist_info}/{file}"
            z.writestr(name, text)
            records.append(record_line(name, text.encode()))
        records.append(f"{dist_info}/RECORD,,")
        z.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    print(wheel)


if __name__ == "__main__":
    main()
