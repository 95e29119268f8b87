#!/usr/bin/env python3
"""plot_key_check.py OUT...: whether the legend of a `bucketsim plot` figure covers a data point.

For each figure OUT (OUT.gp and OUT.dat, as `plot` wrote them), the script is run by gnuplot once
per terminal (PDF, SVG, PNG) with a line after each `plot` command that prints the graph's
extents and the terminal's character size as gnuplot itself has them (GPVAL_TERM_XMIN, XMAX,
YMIN, YMAX, HCHAR, VCHAR).  Each panel's legend box, when it is inside the graph, is PLOT_KEY_W(L)
= L + 9 characters wide (L the longest title) and PLOT_KEY_H(N) = 1.1 N + 1.5 lines high (N
entries) from its corner (analysis/plot_fig.h), in that terminal's characters; every point of
the panel's data blocks (x and each y column; a bar: its area from the axis to y, sampled) is
placed in the graph from the panel's `set xrange` / `set yrange` and log scales, and must lie
outside the box.  A legend below, above, outside or off covers nothing in the graph: for those
the script checks that the graph kept at least 30 characters of width (no squeezed strip: a
3.5 in panel's graph is 35 to 50 characters wide in the three terminals).

Prints one line per figure and panel; exits 1 if any point is covered (naming it), else 0.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

KEY_W = lambda L: L + 9
KEY_H = lambda n: 1.1 * n + 1.5


def gp_string(s, i):
    """The gnuplot string expression at s[i] (double-quoted parts joined by '.'): its text."""
    out = []
    while True:
        assert s[i] == '"', s[i:]
        i += 1
        while s[i] != '"':
            c = s[i]
            if c == '\\':
                n = s[i + 1]
                if n in '01234567':
                    j = i + 1
                    while j < len(s) and s[j] in '01234567':
                        j += 1
                    out.append(chr(int(s[i + 1:j], 8)))
                    i = j
                    continue
                out.append({'n': '\n', 't': '\t'}.get(n, n))
                i += 2
                continue
            out.append(c)
            i += 1
        i += 1
        if s.startswith('."', i):
            i += 1
            continue
        return ''.join(out), i


def parse(gp):
    """The panels of the script: for each `plot` command, the state it is drawn in."""
    lines = gp.split('\n')
    panels, st = [], {'logx': False, 'logy': False, 'key': 'top right', 'boxwidth': None}
    i = 0
    while i < len(lines):
        l = lines[i].strip()
        m = re.match(r'set ([xy])range \[([^:]*):([^\]]*)\]', l)
        if m:
            try:
                st[m.group(1) + 'r'] = (float(m.group(2)), float(m.group(3)))
            except ValueError:  # an end left to gnuplot: no legend is inside such a panel
                st[m.group(1) + 'r'] = None
        if l.startswith('set logscale x'):
            st['logx'] = True
        if l.startswith('set logscale y'):
            st['logy'] = True
        if l.startswith('unset logscale x'):
            st['logx'] = False
        if l.startswith('set key '):
            k = l[8:]
            if k.startswith('inside '):
                k = k[7:]
            for pos in ('top left', 'top right', 'top center', 'bottom left', 'bottom right',
                        'bottom center', 'below', 'above', 'outside'):
                if k.startswith(pos):
                    st['key'] = pos
        if l == 'unset key':
            st['key'] = 'off'
        m = re.match(r'set boxwidth ([0-9.e+-]+)', l)
        if m:
            st['boxwidth'] = float(m.group(1))
        if l.startswith('plot '):
            cmd = l
            end = i
            while lines[end].rstrip().endswith('\\'):
                end += 1
                cmd = cmd[:-1] + ' ' + lines[end].strip()
            clauses, titles = [], []
            # Clauses are separated by ", " outside strings.
            j, cur = 5, ''
            while j < len(cmd):
                if cmd[j] == '"':
                    t, k = gp_string(cmd, j)
                    if re.search(r'(^|\s)title\s*$', cur):
                        titles.append(t)
                    cur += cmd[j:k]
                    j = k
                    continue
                if cmd[j] == ',':
                    clauses.append(cur)
                    cur = ''
                else:
                    cur += cmd[j]
                j += 1
            clauses.append(cur)
            blocks = []
            for c in clauses:
                m = re.search(r'index (\d+)', c)
                if m:
                    blocks.append((int(m.group(1)), 'with boxes' in c))
            panels.append({'line': end, 'xr': st.get('xr'), 'yr': st.get('yr'),
                           'logx': st['logx'], 'logy': st['logy'], 'key': st['key'],
                           'titles': titles, 'blocks': sorted(set(blocks)),
                           'boxwidth': st['boxwidth']})
            i = end
        i += 1
    return panels


def data_blocks(dat):
    blocks, cur = [], None
    for l in dat.split('\n'):
        if l.startswith('# '):
            cur = []
            blocks.append(cur)
            continue
        f = l.split()
        if f and cur is not None:
            cur.append([float(x) if x not in ('NaN', 'nan') else math.nan for x in f])
    return blocks


def geometry(out, panels):
    """Runs the script with a print after each panel: per terminal, each panel's extents."""
    d = tempfile.mkdtemp()
    try:
        base = os.path.basename(out)
        shutil.copy(out + '.dat', os.path.join(d, base + '.dat'))
        lines = open(out + '.gp').read().split('\n')
        for p in reversed(panels):
            lines.insert(p['line'] + 1, '  print sprintf("GEOM %s %g %g %g %g %g %g %g", fmt, '
                         'GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, GPVAL_TERM_YMAX, '
                         'GPVAL_TERM_HCHAR, GPVAL_TERM_VCHAR, GPVAL_TERM_XSIZE)')
        open(os.path.join(d, base + '.gp'), 'w').write('set print "-"\n' + '\n'.join(lines))
        r = subprocess.run(['gnuplot', './' + base + '.gp'], cwd=d, capture_output=True, text=True)
        if r.returncode:
            sys.exit('%s: gnuplot failed: %s' % (out, r.stderr))
        geo = {}
        for l in r.stdout.split('\n'):
            f = l.split()
            if f and f[0] == 'GEOM':
                geo.setdefault(f[1], []).append([float(x) for x in f[2:]])
        return geo, r.stderr
    finally:
        shutil.rmtree(d)


def frac(v, r, lg):
    if lg:
        return (math.log(v) - math.log(r[0])) / (math.log(r[1]) - math.log(r[0]))
    return (v - r[0]) / (r[1] - r[0])


def main():
    bad = 0
    for out in sys.argv[1:]:
        panels = parse(open(out + '.gp').read())
        blocks = data_blocks(open(out + '.dat').read())
        geo, err = geometry(out, panels)
        m = re.search(r'set multiplot layout (\d+),(\d+)', open(out + '.gp').read())
        cols = int(m.group(2)) if m else 1
        if 'warning' in err:  # e.g. "difficulty fitting plot titles into key"
            print('%s: gnuplot: %s' % (out, err.strip()))
            bad += 1
        for fmt, g in sorted(geo.items()):
            # The script scales its terminal coordinates: HCHAR and VCHAR are in
            # GPVAL_TERM_SCALE units of the extents (XSIZE / the extents' scale).
            for pi, (p, (x0, x1, y0, y1, hc, vc, xs)) in enumerate(zip(panels, g)):
                scale = {'pdf': 200, 'png': 200, 'svg': 100}[fmt]
                hc, vc, xs = hc / scale, vc / scale, xs / scale
                gw, gh = x1 - x0, y1 - y0
                if p['key'] in ('below', 'above', 'outside', 'off') or not p['titles']:
                    ok = gw >= 30 * hc
                    print('%s %s panel %d: legend %s, graph %.0f wide (%.0f characters) of %.0f: %s'
                          % (out, fmt, pi, p['key'], gw, gw / hc, xs, 'ok' if ok else 'SQUEEZED'))
                    bad += not ok
                    continue
                if not p['xr'] or not p['yr']:
                    print('%s %s panel %d: legend %s inside a graph whose ranges the script does '
                          'not fix: its place cannot be checked' % (out, fmt, pi, p['key']))
                    bad += 1
                    continue
                L = max(len(t) for t in p['titles'])
                kw, kh = KEY_W(L) * hc / gw, KEY_H(len(p['titles'])) * vc / gh
                top = p['key'].startswith('top')
                side = p['key'].split()[1]
                covered = []
                for b, boxes in p['blocks']:
                    for row in blocks[b]:
                        x = row[0]
                        for y in row[1:4] if len(row) >= 5 else row[1:2]:
                            if math.isnan(x) or math.isnan(y):
                                continue
                            pts = [(x, y)]
                            if boxes:
                                w = p['boxwidth']
                                pts = [(x + w * (e / 10 - 0.5), y * q / 10 if not p['logy'] else
                                        p['yr'][0] * (y / p['yr'][0]) ** (q / 10))
                                       for e in range(11) for q in range(11) if y > 0]
                            for (px, py) in pts:
                                if (p['logx'] and px <= 0) or (p['logy'] and py <= 0):
                                    continue
                                fx = frac(px, p['xr'], p['logx'] and not boxes)
                                fy = frac(py, p['yr'], p['logy'])
                                if not (0 <= fx <= 1 and 0 <= fy <= 1):
                                    continue
                                inx = (fx <= kw if side == 'left' else fx >= 1 - kw if side == 'right'
                                       else abs(fx - 0.5) <= kw / 2)
                                iny = fy >= 1 - kh if top else fy <= kh
                                if inx and iny:
                                    covered.append((b, px, py))
                print('%s %s panel %d: legend %s (%d entries, %d characters: %.2f x %.2f of the '
                      'graph): %s' % (out, fmt, pi, p['key'], len(p['titles']), L, kw, kh,
                                      'covers %d points, e.g. block %d (%g, %g)' % (
                                          (len(covered),) + covered[0]) if covered else 'no point covered'))
                bad += bool(covered)
    sys.exit(1 if bad else 0)


main()
