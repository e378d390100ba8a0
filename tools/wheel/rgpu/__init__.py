"""rgpu's client: unmodified CUDA programs on remote GPUs (the project's README.md).

The wheel holds the `rgpu` command and rgpu's client libraries; `rgpu run -- PROGRAM`
starts a program on them. No CUDA toolkit is needed on this machine.
"""
from pathlib import Path

__version__ = "@VERSION@"

# The bundled command and the folder it finds rgpu's libraries in (lib/ beside it).
COMMAND = Path(__file__).resolve().parent / "libexec" / "rgpu"
LIBRARY_DIR = COMMAND.parent / "lib"
