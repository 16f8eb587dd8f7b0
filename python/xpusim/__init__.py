"""xpusim: predict the time, energy and dollar cost of Transformer
fine-tuning, kernel by kernel, on GPUs and other devices.

Bindings to the C library libxpusim (include/xpusim.h) through ctypes.

Scenario overrides (the command's --set KEY=VALUE) are given either as a
dict, set={"train.batch": 16}, or as keyword arguments with the dots
written as double underscores, train__batch=16; both may be mixed (the
keywords win). Values are written as the command line takes them: True and
False become true and false, other values str().

Every failure raises xpusim.Error, whose message is the line the xpusim
command prints after "xpusim: error: ".
"""
import ctypes
import json
import os
import subprocess
import sys

__all__ = ["Error", "version", "devices", "scenarios", "predict", "summary", "ops",
           "compare", "sweep", "validate"]

_MAJOR = 0


class Error(Exception):
    """An xpusim error: .code is the library's status code (< 0), str() its message."""

    def __init__(self, code, message, more=""):
        super().__init__(message)
        self.code = code
        self.more = [line for line in more.split("\n") if line]


class _Status(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024),
                ("more", ctypes.c_char * 3072)]


class _Summary(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in (
        "step_time_s", "step_time_low_s", "step_time_high_s", "samples_per_s",
        "tokens_per_s", "mfu", "avg_power_w", "step_energy_j", "host_wait_s")] + [
        ("steps", ctypes.c_int64)] + [(n, ctypes.c_double) for n in (
            "run_time_s", "run_energy_kwh", "run_cost_usd", "run_cost_low_usd",
            "run_cost_high_usd", "memory_gb", "capacity_gb")] + [
        ("fits", ctypes.c_int), ("nops", ctypes.c_size_t)]


class _OpRow(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 48), ("layer", ctypes.c_int),
                ("phase", ctypes.c_char * 8), ("kind", ctypes.c_char * 16),
                ("dtype", ctypes.c_char * 16)] + [
        (n, ctypes.c_int64) for n in ("m", "n", "k", "batch", "calls")] + [
        (n, ctypes.c_double) for n in ("flops", "bytes", "time_s", "energy_j")] + [
        ("bound", ctypes.c_char * 12)]


class _RunRow(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p), ("point", ctypes.c_char_p),
                ("predicted", ctypes.c_int), ("fits", ctypes.c_int),
                ("reason", ctypes.c_char_p)] + [(n, ctypes.c_double) for n in (
                    "step_time_s", "samples_per_s", "tokens_per_s", "mfu", "avg_power_w",
                    "run_time_s", "run_energy_kwh", "run_cost_usd", "run_cost_low_usd",
                    "run_cost_high_usd", "memory_gb", "capacity_gb", "score")] + [
        ("pareto", ctypes.c_int)]


class _GridOpts(ctypes.Structure):
    _fields_ = [("devices", ctypes.POINTER(ctypes.c_void_p)), ("ndevices", ctypes.c_size_t),
                ("vary", ctypes.POINTER(ctypes.c_char_p)), ("nvary", ctypes.c_int),
                ("weights", ctypes.c_char_p), ("budget_usd", ctypes.c_double),
                ("deadline_h", ctypes.c_double)]


_SONAME = "libxpusim.so.%d" % _MAJOR


def _places():
    """(folder or None for the system loader, data root or None), in the
    order tried: the checkout this module runs from (python/xpusim in a
    clone: its build/rel/), this package's folder, where the build found
    the library (pkg-config), the system loader (LD_LIBRARY_PATH, the
    ld.so cache), the usual prefixes' lib/ (this Python's, the user's,
    /usr/local, /usr), pkg-config now, the checkout the package was built
    from. A checkout's library finds no share/xpusim beside it, so its data
    root goes with it."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(src, "include", "xpusim.h")):
        yield os.path.join(src, "build", "rel"), src
    yield here, None
    try:
        from . import _where
    except ImportError:  # run from the sources: no build wrote it
        _where = None
    if _where and _where.LIBDIR:
        yield _where.LIBDIR, None
    yield None, None
    import site
    for prefix in (sys.prefix, site.USER_BASE, "/usr/local", "/usr"):
        if prefix:
            yield os.path.join(prefix, "lib"), None
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "xpusim"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=30)
        if r.returncode == 0 and r.stdout.strip():
            yield r.stdout.decode().strip(), None
    except (OSError, subprocess.SubprocessError):
        pass
    if _where and _where.CHECKOUT:
        yield os.path.join(_where.CHECKOUT, "build", "rel"), _where.CHECKOUT


def _load():
    env = os.environ.get("XPUSIM_LIB")
    if env:
        try:
            return ctypes.CDLL(env), env
        except OSError as e:
            raise ImportError("xpusim: XPUSIM_LIB=%s: %s; point it at %s or unset it"
                              % (env, e, _SONAME)) from None
    tried, seen = [], set()
    for folder, data in _places():
        if folder is None:
            try:
                return ctypes.CDLL(_SONAME), _SONAME
            except OSError:
                tried.append("the system loader (LD_LIBRARY_PATH, ld.so cache)")
                continue
        path = os.path.join(os.path.abspath(folder), _SONAME)
        if path in seen:
            continue
        seen.add(path)
        if not os.path.exists(path):
            tried.append(os.path.dirname(path))
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        if data and not os.environ.get("XPUSIM_DATA"):
            os.environ["XPUSIM_DATA"] = data
        return lib, path
    raise ImportError("xpusim: cannot find %s; looked in %s. Install it (make install; with "
                      "PREFIX=DIR, run pip install ./python again with PKG_CONFIG_PATH="
                      "DIR/lib/pkgconfig) or set XPUSIM_LIB to the file" % (_SONAME, ", ".join(tried)))


_lib, _LIB_PATH = _load()  # _LIB_PATH: the file, or the soname the loader found
_P = ctypes.POINTER
_vp = ctypes.c_void_p
_strs = _P(ctypes.c_char_p)
for _name, _res, _args in [
        ("xs_lib_version", ctypes.c_char_p, []),
        ("xs_free", None, [_vp]),
        ("xs_device_open", ctypes.c_int, [ctypes.c_char_p, _P(_vp), _P(_Status)]),
        ("xs_device_free", None, [_vp]),
        ("xs_scenario_open", ctypes.c_int,
         [ctypes.c_char_p, _strs, ctypes.c_int, _P(_vp), _P(_Status)]),
        ("xs_scenario_free", None, [_vp]),
        ("xs_list", ctypes.c_int, [ctypes.c_char_p, _P(_strs), _P(ctypes.c_size_t), _P(_Status)]),
        ("xs_predict_run", ctypes.c_int,
         [_vp, _vp, _P(_Summary), _P(_P(_OpRow)), _P(ctypes.c_size_t), _P(_Status)]),
        ("xs_predict_json", _vp, [_vp, _vp, _P(_Status)]),
        ("xs_sweep", ctypes.c_int, [ctypes.c_char_p, _strs, ctypes.c_int, _P(_GridOpts),
                                    _P(_P(_RunRow)), _P(ctypes.c_size_t), _P(_Status)]),
        ("xs_compare", ctypes.c_int, [ctypes.c_char_p, _strs, ctypes.c_int, _P(_GridOpts),
                                      _P(_P(_RunRow)), _P(ctypes.c_size_t), _P(_Status)]),
        ("xs_validate_json", _vp, [_strs, ctypes.c_int, _P(ctypes.c_size_t), _P(_Status)])]:
    _f = getattr(_lib, _name)
    _f.restype = _res
    _f.argtypes = _args

if not _lib.xs_lib_version().decode().startswith("%d." % _MAJOR):
    raise ImportError("xpusim: the library is version %s, this module wants %d.x"
                      % (_lib.xs_lib_version().decode(), _MAJOR))


def _raise(st):
    raise Error(st.code, st.msg.decode("utf-8", "replace"), st.more.decode("utf-8", "replace"))


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _c(value, what, path=False):
    """value as the C string the library reads; a NUL inside would end it
    there, the rest unseen (a device id, a --set, a path cut short), so it
    is refused."""
    data = os.fsencode(value) if path else value.encode()
    if b"\0" in data:
        raise ValueError("xpusim: %s %r holds a NUL character, where the C library would "
                         "cut it short" % (what, value))
    return data


def _sets(set, kw):
    merged = dict(set or {})
    for k, v in kw.items():
        merged[k.replace("__", ".")] = v
    items = [_c("%s=%s" % (k, _text(v)), "the setting") for k, v in merged.items()]
    return (ctypes.c_char_p * max(len(items), 1))(*items), len(items)


def _strings(values, what):
    values = [_c(v, what) for v in values]
    return (ctypes.c_char_p * max(len(values), 1))(*values), len(values)


class _Handles:
    """Opened device and scenario handles, freed on exit."""

    def __init__(self):
        self.devs, self.scns = [], []

    def device(self, dev):
        h, st = _vp(), _Status()
        if _lib.xs_device_open(_c(dev, "the device", True), ctypes.byref(h), ctypes.byref(st)):
            _raise(st)
        self.devs.append(h)
        return h

    def scenario(self, scn, set, kw):
        arr, n = _sets(set, kw)
        h, st = _vp(), _Status()
        if _lib.xs_scenario_open(_c(scn, "the scenario", True), arr, n, ctypes.byref(h),
                                 ctypes.byref(st)):
            _raise(st)
        self.scns.append(h)
        return h

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.devs:
            _lib.xs_device_free(h)
        for h in self.scns:
            _lib.xs_scenario_free(h)


def _take_text(ptr):
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        _lib.xs_free(ptr)


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.xs_lib_version().decode()


def _list(folder):
    ids, n, st = _strs(), ctypes.c_size_t(), _Status()
    if _lib.xs_list(_c(folder, "the folder"), ctypes.byref(ids), ctypes.byref(n), ctypes.byref(st)):
        _raise(st)
    try:
        return [ids[i].decode() for i in range(n.value)]
    finally:
        _lib.xs_free(ids)


def devices():
    """The ids of the shipped devices."""
    return _list("devices")


def scenarios():
    """The ids of the shipped scenarios."""
    return _list("scenarios")


def predict(device, scenario, set=None, **kw):
    """The whole prediction of scenario (an id or a path) on device, as the
    dict `xpusim predict --format json` prints: "device", "scenario",
    "step", "run", "memory", "ops", ..."""
    with _Handles() as h:
        d, s = h.device(device), h.scenario(scenario, set, kw)
        st = _Status()
        ptr = _lib.xs_predict_json(d, s, ctypes.byref(st))
        if not ptr:
            _raise(st)
        return json.loads(_take_text(ptr))


def _fields(row):
    out = {}
    for name, _ in row._fields_:
        v = getattr(row, name)
        out[name] = v.decode() if isinstance(v, bytes) else v
    return out


def _run(device, scenario, set, kw, want_ops):
    with _Handles() as h:
        d, s = h.device(device), h.scenario(scenario, set, kw)
        sm, st = _Summary(), _Status()
        rows, n = _P(_OpRow)(), ctypes.c_size_t()
        if _lib.xs_predict_run(d, s, ctypes.byref(sm), ctypes.byref(rows) if want_ops else None,
                               ctypes.byref(n) if want_ops else None, ctypes.byref(st)):
            _raise(st)
        try:
            got = [_fields(rows[i]) for i in range(n.value)] if want_ops else None
        finally:
            if want_ops:
                _lib.xs_free(rows)
        out = _fields(sm)
        out["fits"] = bool(out["fits"])
        return out, got


def summary(device, scenario, set=None, **kw):
    """The answer alone, as a flat dict: step_time_s (and its band _low_s,
    _high_s), samples_per_s, tokens_per_s, mfu, avg_power_w, step_energy_j,
    host_wait_s, steps, run_time_s, run_energy_kwh, run_cost_usd (and its
    band), memory_gb, capacity_gb (GB of 2^30 bytes), fits, nops."""
    return _run(device, scenario, set, kw, False)[0]


def ops(device, scenario, set=None, **kw):
    """The step's ops, one dict each, totals per step: name, layer, phase,
    kind, dtype, m, n, k, batch, calls, flops, bytes, time_s, energy_j,
    bound. Their time_s and summary()'s host_wait_s add up to the step."""
    return _run(device, scenario, set, kw, True)[1]


def _vary_specs(vary):
    specs = []
    for k, v in (vary or {}).items():
        if isinstance(v, (list, tuple, range)):
            v = ",".join(_text(x) for x in v)
        specs.append("%s=%s" % (k, _text(v)))
    return specs


def _grid(fn, scenario, devices, vary, set, kw, weights=None, budget_usd=None,
          deadline_h=None):
    if isinstance(devices, str):
        devices = [devices]
    with _Handles() as h:
        hs = [h.device(d) for d in (devices or [])]
        darr = (_vp * max(len(hs), 1))(*hs)
        varr, nvary = _strings(_vary_specs(vary), "the vary axis")
        sarr, nsets = _sets(set, kw)
        opts = _GridOpts(ctypes.cast(darr, _P(_vp)), len(hs), varr, nvary,
                         _c(weights, "weights") if weights else None, float(budget_usd or 0),
                         float(deadline_h or 0))
        rows, n, st = _P(_RunRow)(), ctypes.c_size_t(), _Status()
        if fn(_c(scenario, "the scenario", True), sarr, nsets, ctypes.byref(opts), ctypes.byref(rows),
              ctypes.byref(n), ctypes.byref(st)):
            _raise(st)
        try:
            out = []
            for i in range(n.value):
                r = _fields(rows[i])
                r["predicted"], r["fits"], r["pareto"] = (
                    bool(r["predicted"]), bool(r["fits"]), bool(r["pareto"]))
                r["point"] = dict(p.split("=", 1) for p in r["point"].split(" ")) \
                    if r["point"] else {}
                out.append(r)
            return out
        finally:
            _lib.xs_free(rows)


def sweep(scenario, devices, vary=None, set=None, **kw):
    """`xpusim sweep --band`: scenario at every point of the grid
    vary={"train.batch": [8, 16] or "8:64:8", ...} on each device (an id or
    a list of them), one dict a (point, device) in grid order: device,
    point ({key: value as text}), predicted, fits, reason (None when the
    run can start), step_time_s, samples_per_s, tokens_per_s, mfu,
    avg_power_w, run_time_s, run_energy_kwh, run_cost_usd,
    run_cost_low_usd, run_cost_high_usd, memory_gb, capacity_gb."""
    if not devices:
        raise Error(-7, "sweep: give one device or more")
    rows = _grid(_lib.xs_sweep, scenario, devices, vary, set, kw)
    for r in rows:
        del r["score"], r["pareto"]
    return rows


def compare(scenario, devices=None, vary=None, weights=None, budget_usd=None, deadline_h=None,
            set=None, **kw):
    """`xpusim compare --weights ...`: scenario on devices (None: every
    shipped accelerator) over the grid vary, the sweep's rows plus score
    (0..1) and pareto (on run time and cost), best first; weights
    "time=W,energy=W,cost=W,util=W" (default time=1,cost=1); runs over
    budget_usd or deadline_h are left out."""
    return _grid(_lib.xs_compare, scenario, devices, vary, set, kw, weights, budget_usd,
                 deadline_h)


def validate(measured_csv):
    """`xpusim validate --measured F... --format json` as a dict: "rows"
    (each measured row predicted, with its error or its reason) and
    "summary". measured_csv: a path or a list of them."""
    paths = [measured_csv] if isinstance(measured_csv, (str, bytes, os.PathLike)) \
        else list(measured_csv)
    arr = (ctypes.c_char_p * max(len(paths), 1))(*[_c(p, "the measured CSV", True) for p in paths])
    st = _Status()
    ptr = _lib.xs_validate_json(arr, len(paths), None, ctypes.byref(st))
    if not ptr:
        _raise(st)
    return json.loads(_take_text(ptr))
