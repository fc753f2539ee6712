"""The desk's check that Qt's xcb plugin can load: the missing libraries read from ldd, named as Debian
packages (the packages the README lists for the desk)."""

from app.gui.platform_check import debian_package, not_found

LDD = """\tlinux-vdso.so.1 (0x00007ffc)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => /lib/x86_64-linux-gnu/libxcb-icccm.so.4 (0x00007f)
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-cursor.so.0 => not found
"""


def test_ldd_output_gives_each_missing_library_once():
    assert not_found(LDD) == ["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"]


def test_libraries_are_named_by_their_debian_packages():
    # Debian's names for these libraries, as `apt-get install` takes them
    known = {
        "libxcb-cursor.so.0": "libxcb-cursor0",
        "libxcb-icccm.so.4": "libxcb-icccm4",
        "libxcb-keysyms.so.1": "libxcb-keysyms1",
        "libxcb-render-util.so.0": "libxcb-render-util0",
        "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
        "libEGL.so.1": "libegl1",
        "libdbus-1.so.3": "libdbus-1-3",
    }
    assert {name: debian_package(name) for name in known} == known
