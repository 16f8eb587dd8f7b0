#!/usr/bin/env python3
"""check_layers.py — the library's layering, shown with the build itself.

The Makefile compiles each room of sim/ seeing only its own headers and
those of the rooms it stands on (ROOM_<room>). This check proves the rule
holds both ways a layering can break:

  includes  for every room, one header of every room it may not see is
            #included with that room's own -I flags: each must fail to
            compile (and the kernels, compiled without the library's
            include path, must fail on every room's header);
  symbols   in the built objects (nm), every undefined symbol a file of
            the library uses is defined in its own room or one it stands
            on; the kernels use only the kernels, calibrate/ nothing of
            cli/. The one exception is a registry (--registry FILE=ROOM,...):
            a table that names the records of the rooms standing on it
            (the class table, the family table);
  circles   no two object files depend on each other, directly or round a
            longer circle (strongly connected components of the symbol
            graph).

    tools/check_layers.py --cc cc --objects build/rel \\
        --room base= --room core=base ... [--registry sim/devices/backend.c=devices/gpu,...]

Exit 0 when all three hold, 1 with one line per breach otherwise.
"""
import argparse
import collections
import glob
import os
import subprocess
import sys


def parse_rooms(specs):
    rooms = collections.OrderedDict()
    for spec in specs:
        name, _, sees = spec.partition("=")
        rooms[name] = sees.split()
    return rooms


def room_flags(rooms, room):
    return ["-Isim/" + r for r in [room] + rooms[room]]


def compiles(cc, flags, header):
    """1 when a file holding only #include "header" preprocesses with flags."""
    r = subprocess.run([cc, "-E", "-x", "c", "-", "-o", os.devnull] + flags,
                       input='#include "%s"\n' % header, text=True, capture_output=True)
    return r.returncode == 0


def check_includes(cc, rooms):
    breaches, tried = [], 0
    first = {r: sorted(os.path.basename(h) for h in glob.glob("sim/%s/*.h" % r))
             for r in rooms}
    for room in rooms:
        seen = set([room] + rooms[room])
        for other in rooms:
            if other in seen or not first[other]:
                continue
            tried += 1
            if compiles(cc, room_flags(rooms, room), first[other][0]):
                breaches.append('includes: sim/%s can include "%s" of sim/%s, which it does '
                                "not stand on" % (room, first[other][0], other))
    for other in rooms:  # the kernels see no room of the library
        if not first[other]:
            continue
        tried += 1
        if compiles(cc, ["-Ikernels/cpu", "-Ikernels/common"], first[other][0]):
            breaches.append('includes: kernels/cpu can include "%s" of sim/%s' %
                            (first[other][0], other))
    return breaches, tried


def owner(rel_obj, rooms):
    """The room (or top folder) a source file's object belongs to."""
    d = os.path.dirname(rel_obj)
    if d.startswith("sim/"):
        return d[4:]
    return d.split("/")[0] if d else d


def nm_symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRCV":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def may_use(rooms, user, definer):
    if user == definer:
        return True
    if user in rooms:
        return definer in rooms[user]
    if user == "kernels":
        return definer == "kernels"
    if user == "calibrate":
        return definer in rooms or definer == "kernels"
    return True  # cli/ and tests/ stand on everything


def strongly_connected(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        # iterative Tarjan: the graph has hundreds of nodes, recursion is fine
        # in depth but explicit frames keep it so for any tree
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_symbols(objdir, rooms, registries):
    objs = []
    for top in ["sim", "kernels/cpu", "calibrate", "cli"]:
        for path in glob.glob(os.path.join(objdir, top, "**", "*.o"), recursive=True):
            rel = os.path.relpath(path, objdir)
            if os.path.exists(rel[:-2] + ".c"):  # not a file since moved or removed
                objs.append(rel)
    if not objs:
        return ["symbols: no object files under %s (build first)" % objdir], 0, 0
    # a symbol may have two definers: a stand-in for another build (the
    # CPU backend of a build without the kernels, calibrate/cpu_absent.c)
    defs, uses = collections.defaultdict(list), {}
    for rel in objs:
        d, u = nm_symbols(os.path.join(objdir, rel))
        uses[rel] = u
        for s in d:
            defs[s].append(rel)
    breaches = []
    graph = collections.defaultdict(set)
    for rel in sorted(objs):
        user = owner(rel, rooms)
        src = rel[:-2] + ".c"
        allowed_up = registries.get(src, set())
        for s in sorted(uses[rel]):
            if s not in defs or rel in defs[s]:
                continue
            ok = [d for d in defs[s] if may_use(rooms, user, owner(d, rooms)) or
                  owner(d, rooms) in allowed_up]
            graph[rel].add((ok or defs[s])[0])
            if not ok:
                breaches.append("symbols: %s uses %s of %s (%s stands on %s)" %
                                (src, s, defs[s][0][:-2] + ".c", user,
                                 " ".join(rooms.get(user, [])) or "nothing"))
        graph[rel]  # every object a node
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    for c in circles:
        breaches.append("circles: " + " <-> ".join(p[:-2] + ".c" for p in c))
    edges = sum(len(v) for v in graph.values())
    return breaches, len(objs), edges


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--objects", default="build/rel")
    ap.add_argument("--room", action="append", default=[], help="ROOM=ROOMS IT STANDS ON")
    ap.add_argument("--registry", action="append", default=[],
                    help="FILE=ROOM,ROOM: a table that may name those rooms' records")
    a = ap.parse_args()
    rooms = parse_rooms(a.room)
    if not rooms:
        sys.exit("check_layers: give the rooms (--room NAME=BELOW...)")
    registries = {}
    for r in a.registry:
        f, _, rs = r.partition("=")
        registries[f] = set(rs.split(","))
    bad_inc, tried = check_includes(a.cc, rooms)
    bad_sym, nobj, nedges = check_symbols(a.objects, rooms, registries)
    for line in bad_inc + bad_sym:
        print("check_layers: " + line)
    if bad_inc or bad_sym:
        print("check_layers: FAILED (%d breaches)" % (len(bad_inc) + len(bad_sym)))
        return 1
    print("check_layers: %d rooms; %d includes of a room not stood on tried, each failed to "
          "compile; %d objects, %d file dependencies, each down or within a room (registries: "
          "%s), no circle" % (len(rooms), tried, nobj, nedges,
                              ", ".join(sorted(registries)) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
