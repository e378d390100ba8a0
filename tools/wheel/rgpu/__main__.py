"""The `rgpu` console command: runs the bundled rgpu executable.

A wheel cannot hold symbolic links, and rgpu's driver (libcuda.so.1) must be
the very file its runtime (libcudart.so.13) is: the loader maps one file once,
so a program using both APIs gets one client. The links are made here, once,
beside the runtime.
"""
import os
import sys

from rgpu import COMMAND, LIBRARY_DIR

DRIVER_NAMES = ("libcuda.so.1", "libcuda.so")


def _link_driver() -> None:
    for name in DRIVER_NAMES:
        link = LIBRARY_DIR / name
        if link.is_symlink():
            continue
        try:
            link.symlink_to("libcudart.so.13")
        except FileExistsError:
            pass  # another rgpu made it meanwhile
        except OSError as e:
            sys.exit(f"rgpu: cannot make {link} ({e.strerror}); run `rgpu --version` once as the user "
                     "who installed rgpu (it makes the links rgpu's driver needs)")


def main() -> None:
    _link_driver()
    os.execv(COMMAND, [str(COMMAND)] + sys.argv[1:])


if __name__ == "__main__":
    main()
