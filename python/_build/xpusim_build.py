"""The package's PEP 517 build backend: pure Python, standard library only.

`pip install ./python` in a fresh venv, with no network, has pip, and on
some Pythons setuptools, but never `wheel`, which setuptools' backend asks
for; so setuptools cannot build this package there without a download or
--no-build-isolation. The package is a folder of .py files, and a wheel of
pure Python is a zip of those files plus a .dist-info folder (METADATA,
WHEEL, RECORD): this backend writes it with zipfile and needs nothing
installed. It builds wheels, editable wheels (pip install -e) and sdists.

The wheel also carries xpusim/_where.py: where this build found libxpusim
(`pkg-config --variable=libdir xpusim`, which follows PKG_CONFIG_PATH, so a
`make install PREFIX=...` is found as the C example finds it) and the
source checkout it was built from, if any: places the module looks at
import time besides its usual ones (xpusim/__init__.py, _load).
"""
import base64
import hashlib
import io
import os
import re
import subprocess
import tarfile
import time
import zipfile

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
_PACKAGE = "xpusim"
_MAJOR = 0


def _project():
    """[project] of pyproject.toml: its plain strings and {text = ...}."""
    with open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib  # Python 3.11+
        return tomllib.loads(text)["project"]
    except ImportError:
        pass
    out, inside = {}, False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == "[project]"
            continue
        m = re.match(r'([A-Za-z_-]+)\s*=\s*(\{\s*text\s*=\s*)?"([^"]*)"', line) if inside else None
        if m:
            out[m.group(1)] = {"text": m.group(3)} if m.group(2) else m.group(3)
    return out


def _names():
    p = _project()
    return p, p["name"], p["version"], "%s-%s" % (p["name"], p["version"])


def _metadata():
    p, name, version, _ = _names()
    lines = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version]
    if "description" in p:
        lines.append("Summary: " + p["description"])
    if "requires-python" in p:
        lines.append("Requires-Python: " + p["requires-python"])
    lic = p.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append("License: " + lic["text"])
    body = ""
    if "readme" in p:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(_HERE, p["readme"]), encoding="utf-8") as f:
            body = "\n" + f.read()
    return ("\n".join(lines) + "\n" + body).encode("utf-8")


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: xpusim_build\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n").encode()


def _pkg_config_libdir():
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "xpusim"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    d = r.stdout.decode().strip() if r.returncode == 0 else ""
    return d if d and os.path.exists(os.path.join(d, "libxpusim.so.%d" % _MAJOR)) else None


def _checkout():
    root = os.path.dirname(_HERE)
    ok = all(os.path.exists(os.path.join(root, f)) for f in ("include/xpusim.h", "Makefile"))
    return root if ok else None


def _where():
    return ('"""Written by the build (python/_build/xpusim_build.py): where libxpusim was\n'
            'found when this package was built. Hints only: xpusim/__init__.py tries\n'
            'them after XPUSIM_LIB and before the system\'s usual places."""\n'
            "LIBDIR = %r\nCHECKOUT = %r\n" % (_pkg_config_libdir(), _checkout())).encode()


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def _zip_info(arc):
    # fixed dates and modes: the same sources give the same wheel
    zi = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
    zi.external_attr = 0o644 << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    return zi


def _write_wheel(wheel_directory, files):
    """files: [(name in the wheel, bytes)], the .dist-info added here."""
    _, name, version, dist = _names()
    info = dist + ".dist-info"
    files = list(files) + [(info + "/METADATA", _metadata()), (info + "/WHEEL", _wheel_file())]
    record = [_record_line(a, d) for a, d in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = "%s-%s-py3-none-any.whl" % (name, version)
    path = os.path.join(wheel_directory, wheel)
    with zipfile.ZipFile(path + ".part", "w") as z:
        for arc, data in files:
            z.writestr(_zip_info(arc), data)
    os.replace(path + ".part", path)
    return wheel


def _package_files():
    out = []
    top = os.path.join(_HERE, _PACKAGE)
    for d, subdirs, names in os.walk(top):
        subdirs[:] = sorted(s for s in subdirs if s != "__pycache__")
        for n in sorted(names):
            if n.endswith(".py") and n != "_where.py":
                full = os.path.join(d, n)
                with open(full, "rb") as f:
                    out.append((os.path.relpath(full, _HERE).replace(os.sep, "/"), f.read()))
    return out


# --- PEP 517 / PEP 660 hooks ---------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = _names()[3] + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for n, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, info, n), "wb") as f:
            f.write(data)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files() + [(_PACKAGE + "/_where.py", _where())])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # a .pth naming python/: the module is imported from the sources, and
    # finds the checkout's build/rel/ library from there
    return _write_wheel(wheel_directory, [("_xpusim_editable.pth", (_HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    _, _, _, dist = _names()
    members = ["pyproject.toml", "README.md", "_build/xpusim_build.py"]
    members += [a for a, _ in _package_files()]
    tests = os.path.join(_HERE, "tests")
    if os.path.isdir(tests):
        members += ["tests/" + n for n in sorted(os.listdir(tests)) if n.endswith(".py")]
    name = dist + ".tar.gz"
    path = os.path.join(sdist_directory, name)

    def add(tar, arc, data):
        ti = tarfile.TarInfo(dist + "/" + arc)
        ti.size, ti.mode, ti.mtime = len(data), 0o644, int(time.time())
        tar.addfile(ti, io.BytesIO(data))

    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arc in members:
            with open(os.path.join(_HERE, arc), "rb") as f:
                add(tar, arc, f.read())
        add(tar, "PKG-INFO", _metadata())
    os.replace(path + ".part", path)
    return name
